"""End to end: `askchain serve` as a subprocess with the embedded model, a question and a follow-up over SSE."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = [pytest.mark.llm, pytest.mark.timeout(900)]


@pytest.fixture
def served(settings, tmp_path):
    """`askchain serve` on a free loopback port, over concert_singer, with threads in a temp data dir."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    location = settings.pipeline.get("databases")["concert_singer"]
    env = {**os.environ, "ASKCHAIN_PATHS__DATA_DIR": str(tmp_path / "data")}
    log = open(tmp_path / "serve.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "askchain.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--db", f"concert_singer={location}"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("askchain serve did not start:\n" + (tmp_path / "serve.log").read_text())
            time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def query(base: str, sse, **body) -> dict[str, list[dict]]:
    # the baseline keeps this test to a few model calls; the pipeline graph has its own real-model test
    with httpx.stream("POST", f"{base}/query", json={"db": "concert_singer", "method": "baseline", **body}, timeout=600) as response:
        assert response.status_code == 200
        text = response.read().decode()
    events: dict[str, list[dict]] = {}
    for name, data in sse(text):
        events.setdefault(name, []).append(data)
    return events


def test_question_and_follow_up_with_the_embedded_model(served, sse):
    health = httpx.get(f"{served}/health").json()
    assert health["engine"] == "llama.cpp"

    first = query(served, sse, question="How many singers are there?")
    assert "error" not in first, first.get("error")
    assert "rewrite" not in first
    assert {"generate", "execute", "answer"} <= {e["stage"] for e in first["stage"]}
    assert "singer" in first["sql"][0]["sql"].lower()
    assert first["rows"][0]["rows"] == [[6]]
    assert first["answer"][0]["text"]
    done = first["done"][0]
    assert done["tokens"] > 0 and done["model"].startswith("llamacpp:")

    second = query(served, sse, question="And how many of them are from France?", thread_id=done["thread_id"])
    assert "error" not in second, second.get("error")
    rewritten = second["rewrite"][0]["question"]
    assert rewritten and rewritten != "And how many of them are from France?"
    assert "france" in second["sql"][0]["sql"].lower()
    assert second["done"][0]["turn"] == 2

    thread = httpx.get(f"{served}/threads/{done['thread_id']}").json()
    assert len(thread["turns"]) == 2
