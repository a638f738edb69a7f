"""End to end: `askchain serve` as a subprocess with the embedded model, a question and a follow-up over SSE."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.llm, pytest.mark.timeout(900)]


@pytest.fixture
def served(settings, serve_command):
    """`askchain serve` over concert_singer."""
    location = settings.server.databases["concert_singer"]
    return serve_command("--db", f"concert_singer={location}")


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
    assert {"draft", "select", "answer"} <= {e["stage"] for e in first["stage"]}
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
