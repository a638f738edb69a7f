"""The whole graph with the real embedded model: every stage runs and the trace shows it."""

import json

import pytest

from askchain import ask
from askchain.config import get_settings

pytestmark = pytest.mark.llm


def test_pipeline_with_the_embedded_model(concert_db):
    settings = get_settings().with_overrides(
        llm={"cache": False},
        # the full few-shot index takes minutes to embed; its retrieval is tested on a small pool in tests/retrieval
        # and agreement_exit 0 runs every generator even when the drafts agree (the early exit is tested with the fake);
        # the generators the default configuration switches off are switched on here, and linking runs on a small schema
        pipeline={"examples_k": 0, "answer": True, "agreement_exit": 0, "schema_linking": "always", "generators": {
            name: {"enabled": True} for name in ("divide_and_conquer", "query_plan", "role_play", "synthetic")}},
    )
    result = ask("How many singers are from France?", str(concert_db), method="pipeline", model="qwen2.5-coder-1.5b", settings=settings)
    assert result.error is None and result.rows == [[4]]
    assert result.answer and "4" in result.answer
    trace = json.loads((settings.paths.traces() / f"{result.run_id}.json").read_text())
    stages = [s["stage"] for s in trace["stages"]]
    linked = next(s for s in trace["stages"] if s["stage"] == "schema_linking")["linked"]
    assert "singer" in {table.lower() for table in linked}
    for name in ("values", "build_context", "draft", "divide_and_conquer", "query_plan", "role_play", "synthetic", "revise", "select", "answer"):
        assert name in stages
    made = {s["stage"] for s in trace["stages"] if s.get("candidates")}
    assert {"divide_and_conquer", "query_plan", "role_play"} <= made
