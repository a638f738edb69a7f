"""The three methods are one graph configured three ways: compiled once per configuration, the same rules, the
model roles routed to their models."""

from __future__ import annotations

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.errors import ConfigError
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.graph import compiled_graph
from askchain.pipeline.methods import method_settings
from askchain.pipeline.run import Models
from askchain.pipeline.shape import Shape
from askchain.resources import Resources

COUNT = "```sql\nSELECT count(*) FROM singer\n```"
EMPTY = "```sql\nSELECT name FROM singer WHERE country = 'Peru'\n```"
BROKEN = "```sql\nSELECT nope FROM singer\n```"


def quiet(**pipeline):
    """No example store, no value index: the tests below are about the graph, not retrieval."""
    return get_settings().with_overrides(llm={"cache": False},
                                         pipeline={"examples_k": 0, "value_retrieval": False, **pipeline})


def test_the_graph_is_compiled_once_per_configuration(db):
    compiled_graph.cache_clear()
    settings = quiet(answer=False)
    for question in ("How many singers?", "How many singers are there?", "Count the singers."):
        ask(question, db, method="pipeline", model=ScriptedModel(lambda r, i: COUNT), settings=settings)
    assert compiled_graph.cache_info().misses == 1 and compiled_graph.cache_info().hits == 2
    ask("How many singers?", db, method="baseline", model=ScriptedModel(lambda r, i: COUNT), settings=settings)
    assert compiled_graph.cache_info().misses == 1, "the baseline's chain of stages runs without a graph"
    ask("How many singers?", db, method="pipeline", model=ScriptedModel(lambda r, i: COUNT), settings=quiet())
    assert compiled_graph.cache_info().misses == 2, "another configuration, another graph"


@pytest.mark.parametrize("method, requests, n, temperature", [
    ("baseline", 1, 1, 0.0),
    ("self-consistency", 1, 6, 0.8),
])
def test_comparison_methods_are_configurations_of_the_same_stages(db, method, requests, n, temperature):
    model = ScriptedModel(lambda r, i: COUNT)
    events = []
    result = ask("How many singers?", db, method=method, model=model, settings=quiet(answer=False),
                 on_event=events.append)
    assert result.rows == [[3]] and result.method == method
    assert len(model.requests) == requests and model.requests[0].n == n and model.requests[0].temperature == temperature
    started = [e["stage"] for e in events if e.get("status") == "start"]
    assert started == ["build_context", "draft", "revise", "select", "confidence"], "no retrieval, abstention or answer"


def test_self_consistency_lets_an_agreed_empty_result_stand(db):
    """The pipeline's empty-answer rule holds for self-consistency too: 4 of 6 samples on no rows is the answer,
    and nothing is revised into rows."""
    model = ScriptedModel(lambda r, i: [EMPTY, EMPTY, EMPTY, EMPTY, COUNT, BROKEN][i])
    result = ask("Which singers are from Peru?", db, method="self-consistency", model=model,
                 settings=quiet(answer=False))
    assert result.error is None and result.rows == [] and "Peru" in result.sql
    assert len(model.requests) == 1, "no revision call"


def test_self_consistency_revises_each_failure_once(db):
    model = ScriptedModel(lambda r, i: COUNT if r.n == 1 else BROKEN)
    result = ask("How many singers?", db, method="self-consistency", model=model, settings=quiet(answer=False))
    assert result.rows == [[3]]
    assert [r.n for r in model.requests] == [6, 1], "six samples, then the one distinct failure revised once"


def test_each_role_calls_its_own_model(db):
    creative = ScriptedModel(lambda r, i: [COUNT, BROKEN][i % 2], name="creative")
    factual = ScriptedModel({"revise": COUNT, "summarize": "There are 3 singers."}, name="factual")
    result = ask("How many singers?", db, method="pipeline", model=Models(creative, factual),
                 settings=quiet(agreement_exit=0, revise_beside_rows=True))  # the broken sample is revised
    assert result.rows == [[3]] and result.answer
    assert creative.requests and all(r.temperature > 0 for r in creative.requests), "generation samples"
    assert {r.template for r in creative.requests} == {"direct"}
    factual_calls = [r.template for r in factual.requests]
    assert factual_calls[0] == "revise" and set(factual_calls) <= {"revise", "summarize"}, \
        "the revision of the broken candidate, then (unless a template words it) the answer"
    assert result.model == "fake:creative + fake:factual"


def test_role_models_come_from_settings(db, monkeypatch):
    made = {}

    def fake_get_model(name, settings):
        return made.setdefault(name, ScriptedModel(lambda r, i: COUNT, name=name))

    monkeypatch.setattr("askchain.llm.registry.get_model", fake_get_model)
    settings = quiet(answer=False).with_overrides(llm={"factual_model": "judge", "creative_model": "writer"})
    result = ask("How many singers?", db, method="pipeline", settings=settings, resources=Resources())
    assert result.model == "fake:writer + fake:judge"
    assert made["writer"].requests and not made["judge"].requests  # the draft agreed: nothing to revise or judge


def test_methods_are_data(db):
    assert Shape.of(method_settings(get_settings(), "baseline").pipeline).retrieval == ()
    assert Shape.of(method_settings(get_settings(), "pipeline").pipeline).retrieval == (
        "examples", "schema_linking", "values", "definitions")
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        ask("How many singers?", db, method="nope", model=ScriptedModel(lambda r, i: COUNT))


def drafted_in_turn(replies: list[str]):
    """The draft's i-th sample (seed offset i, however the samples are split into waves) replies replies[i]."""
    seed = get_settings().llm.seed
    return {"direct": lambda request, i: replies[request.seed - seed + i]}


def test_a_first_wave_that_agrees_is_the_whole_draft(db):
    model = ScriptedModel(drafted_in_turn([COUNT] * 3 + [BROKEN] * 3))
    result = ask("How many singers are there?", db, model=model, settings=quiet(draft_first_wave=3))
    assert [(r.template, r.n) for r in model.requests] == [("direct", 3)]
    assert result.rows == [[3]] and result.confidence_reasons[0] == "3 of 3 samples agree on the result"


def test_a_first_wave_that_disagrees_draws_the_rest_and_merges_their_votes(db):
    model = ScriptedModel(drafted_in_turn([COUNT, EMPTY, COUNT, COUNT, COUNT, BROKEN]))
    result = ask("How many singers are there?", db, model=model, settings=quiet(draft_first_wave=3))
    seed = get_settings().llm.seed
    assert [(r.template, r.n, r.seed) for r in model.requests] == [("direct", 3, seed), ("direct", 3, seed + 3)]
    # agreement_exit 4: four of six samples on one result skip revision; the count ran once with all four votes
    assert [(c["sql"], c["votes"]) for c in result.candidates] == [
        ("SELECT count(*) FROM singer", 4), ("SELECT name FROM singer WHERE country = 'Peru'", 1),
        ("SELECT nope FROM singer", 1)]
    assert result.rows == [[3]]


def test_without_a_first_wave_the_draft_is_drawn_at_once(db):
    model = ScriptedModel(drafted_in_turn([COUNT] * 6))
    ask("How many singers are there?", db, model=model, settings=quiet(draft_first_wave=0))
    assert [(r.template, r.n) for r in model.requests] == [("direct", 6)]
