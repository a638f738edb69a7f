"""Load check: 10 concurrent SSE clients on loopback; each completes or gets 429 beyond the limit, never a server error.

pytest -s tests/server/test_load.py prints the figures.
"""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest

from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app

CLIENTS = 10
MODEL_CALL_S = 0.3  # each scripted call sleeps, so questions overlap like real ones


def slow_model(script):
    """The scripted replies, each after MODEL_CALL_S."""
    def slowly(reply):
        def slow_reply(request, i):
            time.sleep(MODEL_CALL_S)
            return reply(request, i)

        return slow_reply

    return ScriptedModel({template: slowly(reply) for template, reply in script.items()})


async def one_client(client: httpx.AsyncClient, sse, question: str) -> tuple[int, list[str], float]:
    started = time.perf_counter()
    async with client.stream("POST", "/query", json={"question": question, "db": "concert_singer"}) as response:
        body = (await response.aread()).decode()
    names = [name for name, _ in sse(body)] if response.status_code == 200 else []
    return response.status_code, names, time.perf_counter() - started


async def run_clients(base: str, sse) -> list[tuple[int, list[str], float]]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        return await asyncio.gather(*(one_client(client, sse, f"How many singers are there? ({i})") for i in range(CLIENTS)))


@pytest.mark.parametrize("limit", [4, CLIENTS])
def test_concurrent_clients(limit, live_server, settings, sse, script):
    app = create_app(settings, slow_model(script), max_concurrent=limit)
    base = live_server(app)
    started = time.perf_counter()
    results = asyncio.run(run_clients(base, sse))
    wall = time.perf_counter() - started

    statuses = [status for status, _, _ in results]
    assert set(statuses) <= {200, 429}, statuses
    completed = [(names, seconds) for status, names, seconds in results if status == 200]
    assert all(names[-1] == "done" and "error" not in names for names, _ in completed)
    # The clients arrive together: `limit` are admitted and answered in parallel, the rest are told to retry.
    assert len(completed) >= limit
    if limit < CLIENTS:
        assert 429 in statuses
    else:
        assert wall < CLIENTS * 2 * MODEL_CALL_S / 2  # well under one-after-another
    assert app.state.slots.active == 0
    latencies = sorted(seconds for _, seconds in completed)
    print(
        f"\nload: {CLIENTS} clients, limit {limit}: {len(completed)} completed, {statuses.count(429)} got 429, "
        f"wall {wall:.2f} s, latency median {statistics.median(latencies):.2f} s, max {latencies[-1]:.2f} s "
        f"(scripted model, {MODEL_CALL_S} s per call, 2 calls per question)"
    )
