"""A configuration whose graph is a chain of stages (the baseline, self-consistency) runs without LangGraph: the
same stages, events, trace and answer as the LangGraph graph of that configuration gives."""

from __future__ import annotations

import pytest

from askchain import ask
from askchain.answer.followup import Turn
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.graph import run_graph
from askchain.pipeline.methods import method_settings
from askchain.pipeline.shape import Shape

COUNT = "```sql\nSELECT count(*) FROM singer\n```"
BROKEN = "```sql\nSELECT nope FROM singer\n```"
#: What varies between two runs of one question whatever runs them.
RUN_BOUND = {"elapsed_s", "run_id", "usage"}


def test_the_comparison_methods_are_chains_and_the_pipeline_is_not():
    shapes = {method: Shape.of(method_settings(get_settings(), method).pipeline)
              for method in ("baseline", "self-consistency", "pipeline")}
    assert shapes["baseline"].chain and shapes["self-consistency"].chain and not shapes["pipeline"].chain


def _answer(db, method, reply, monkeypatch, *, through_graph: bool, **kwargs):
    if through_graph:
        monkeypatch.setattr("askchain.api.run_pipeline", run_graph)
    events: list[dict] = []
    settings = get_settings().with_overrides(llm={"cache": False}, pipeline={"traces": False})
    result = ask("How many singers?", db, method=method, model=ScriptedModel(reply), settings=settings,
                 on_event=events.append, **kwargs)
    return result.model_dump(exclude=RUN_BOUND), [{k: v for k, v in e.items() if k != "seconds"} for e in events]


@pytest.mark.parametrize("method, reply, kwargs", [
    ("baseline", lambda r, i: COUNT, {}),
    ("baseline", lambda r, i: COUNT, {"answer": False}),
    ("self-consistency", lambda r, i: COUNT if r.n == 1 else [COUNT, BROKEN][i % 2], {"answer": False}),
    ("baseline", lambda r, i: "How many singers are there?" if r.template == "rewrite" else COUNT,
     {"history": (Turn("How many singers from France?", "SELECT count(*) FROM singer WHERE country = 'France'",
                      "There are 2 singers from France."),)}),
])
def test_a_chain_runs_as_its_graph_would(db, monkeypatch, method, reply, kwargs):
    chained = _answer(db, method, reply, monkeypatch, through_graph=False, **kwargs)  # before run_graph is patched in
    graphed = _answer(db, method, reply, monkeypatch, through_graph=True, **kwargs)
    assert chained[0]["rows"] == [[3]]
    assert chained == graphed
