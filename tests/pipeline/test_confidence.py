"""Confidence: each rule of the table moves the level as documented; the graph streams it, keeps it in the trace and
on AskResult, shows a low answer's alternatives, and the CLI prints it."""

import json

import pytest
from typer.testing import CliRunner

from askchain import ask
from askchain.config import ConfidenceSettings, get_settings
from askchain.db.base import QueryResult
from askchain.generation.candidates import Candidate
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.confidence import Signals, alternatives, assess, sampled_votes
from askchain.pipeline.revise import Execution
from askchain.pipeline.select import Group, Selection
from askchain.rules.base import Findings

RULES = ConfidenceSettings(high_vote_share=0.8, medium_vote_share=0.5, min_coverage=0.6, alternatives=2,
                           alternative_rows=2)
BASE = dict(samples=6, votes=4)  # 4 of 6 agree: medium, with nothing else said


@pytest.mark.parametrize("changes,level,reason", [
    ({}, "medium", "4 of 6 samples agree on the result"),
    ({"votes": 5}, "high", "5 of 6 samples agree"),  # the vote alone sets the start
    ({"votes": 3}, "medium", "3 of 6 samples agree"),  # 0.5 is medium, not low
    ({"votes": 2}, "low", "2 of 6 samples agree"),
    ({"samples": 1, "votes": 1}, "medium", "one sample"),  # nothing to agree: never high by the vote
    ({"agreed_early": True}, "high", "the draft's samples agreed at once"),  # raises one level
    ({"revisions": 2}, "low", "the SQL needed 2 revision rounds"),  # each weakness lowers one level
    ({"warnings": ("join a.x = b.y is not on a foreign key",)}, "low", "validation warned: join a.x"),
    ({"empty": True}, "low", "the result is empty"),
    ({"coverage": 0.4, "missing_terms": ("salary",)}, "low", "the schema names few of the question's words (not salary)"),
    ({"coverage": 0.6}, "medium", "4 of 6"),  # at the threshold nothing moves
    ({"coverage": None}, "medium", "4 of 6"),  # a question without content words says nothing
    ({"asked_missing": ("salary",)}, "low", "queries asked for salary, which the schema lacks"),
    ({"error": "no such column: salary"}, "low", "the query failed: no such column: salary"),
])
def test_each_rule_moves_the_level_as_documented(changes, level, reason):
    judged = assess(Signals(**{**BASE, **changes}), RULES)
    assert judged.level == level
    assert any(r.startswith(reason) for r in judged.reasons), judged.reasons


@pytest.mark.parametrize("signals,level,reasons", [
    (dict(samples=6, votes=6, agreed_early=True), "high", 2),  # kept at high
    (dict(samples=6, votes=6, revisions=1, empty=True), "low", 3),  # two steps down from high
    (dict(samples=6, votes=1, empty=True, revisions=1), "low", 3),  # kept at low
    (dict(samples=6, votes=6, agreed_early=True, empty=True), "high", 3),  # moves add up: +1 -1 from high
    (dict(samples=6, votes=6, error="timeout", agreed_early=True), "low", 1),  # a failure is low whatever else
])
def test_moves_add_up_between_low_and_high(signals, level, reasons):
    judged = assess(Signals(**signals), RULES)
    assert judged.level == level and len(judged.reasons) == reasons


def _execution(sql, rows, votes=1, round_no=0):
    result = QueryResult(["n"], rows, 0.0)
    return Execution(Candidate(sql, "direct", round=round_no, votes=votes), result, None, Findings(),
                     "success" if rows else "empty")


def test_alternatives_are_the_other_groups_largest_first_with_their_first_rows():
    chosen = _execution("SELECT 1", [(1,)], votes=3)
    second = _execution("SELECT 2", [(2,), (3,), (4,)], votes=2)
    third = _execution("SELECT 5", [(5,)])
    fourth = _execution("SELECT 6", [(6,)])
    selection = Selection(chosen, [Group([chosen]), Group([second]), Group([third]), Group([fourth])])
    shown = alternatives(selection, RULES)
    assert [a["sql"] for a in shown] == ["SELECT 2", "SELECT 5"]  # alternatives: 2
    assert shown[0] == {"sql": "SELECT 2", "votes": 2, "columns": ["n"], "rows": [[2], [3]], "row_count": 3}


def test_samples_are_counted_once_though_revisions_carry_their_votes():
    executions = [_execution("SELECT 1", [(1,)], votes=4), _execution("SELECT x", [], votes=2),
                  _execution("SELECT 2", [(2,)], votes=2, round_no=1)]
    assert sampled_votes(executions) == 6


# ---- through the graph, with the scripted model over the fixture database ------------------------------------------

SPLIT = ["SELECT count(*) FROM singer WHERE Country = 'France'", "SELECT count(*) FROM singer",
         "SELECT count(*) FROM stadium"]  # three results, two samples each: a 2-of-6 vote


def settings(**pipeline):
    return get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "semantic_layer": False,
                                                   "answer": False, **pipeline})


def test_a_split_vote_is_low_and_shows_the_other_results(concert_db):
    events = []
    model = ScriptedModel({"direct": lambda request, i: SPLIT[i % 3]})
    result = ask("How many singers are from France?", str(concert_db), model=model, settings=settings(),
                 on_event=events.append)
    assert result.confidence == "low" and result.confidence_reasons[0] == "2 of 6 samples agree on the result"
    assert [a["sql"] for a in result.alternatives] == [s for s in SPLIT if s != result.sql]
    assert {a["votes"] for a in result.alternatives} == {2} and all(a["rows"] for a in result.alternatives)
    event = next(e for e in events if e["type"] == "confidence")
    assert event == {"type": "confidence", "level": "low", "reasons": result.confidence_reasons,
                     "alternatives": result.alternatives}
    public = result.public()
    assert public["confidence"] == "low" and public["alternatives"] == result.alternatives
    assert public["abstained"] is False and public["confidence_reasons"] == result.confidence_reasons
    trace = json.loads((get_settings().paths.traces() / f"{result.run_id}.json").read_text())
    stage = next(s for s in trace["stages"] if s["stage"] == "confidence")
    assert stage["level"] == "low" and stage["signals"]["samples"] == 6 and stage["signals"]["votes"] == 2


def test_agreeing_samples_are_high_and_show_no_alternatives(concert_db):
    model = ScriptedModel({"direct": "SELECT count(*) FROM singer WHERE Country = 'France'"})
    result = ask("How many singers are from France?", str(concert_db), model=model, settings=settings())
    assert result.confidence == "high" and result.alternatives == []
    assert result.confidence_reasons[:2] == ["6 of 6 samples agree on the result", "the draft's samples agreed at once"]


def test_the_baseline_has_one_sample_and_a_revision_lowers_it(concert_db):
    model = ScriptedModel({"direct": "SELECT count(*) FROM singer WHERE Country = 'France'"})
    result = ask("How many singers are from France?", str(concert_db), method="baseline", model=model,
                 settings=settings())
    assert result.confidence == "medium" and result.confidence_reasons == ["one sample, so no agreement to measure"]
    fixed = ScriptedModel({"direct": "SELECT count(*) FROM singers", "revise": "SELECT count(*) FROM singer"})
    result = ask("How many singers are there?", str(concert_db), method="self-consistency", model=fixed,
                 settings=settings())
    assert result.rows == [[6]] and result.confidence == "medium"  # 6 of 6, one level down for the revision
    assert "the SQL needed 1 revision round" in result.confidence_reasons


def test_the_cli_prints_the_confidence_and_a_low_answers_alternatives(concert_db, monkeypatch):
    import askchain.llm.registry
    from askchain.cli import app

    monkeypatch.setattr(askchain.llm.registry, "get_model",
                        lambda name=None, settings=None: ScriptedModel({"direct": lambda r, i: SPLIT[i % 3],
                                                                        "summarize": "Four."}))
    monkeypatch.setenv("ASKCHAIN_PIPELINE__VALUE_RETRIEVAL", "false")
    monkeypatch.setenv("ASKCHAIN_PIPELINE__EXAMPLES_K", "0")
    get_settings.cache_clear()
    out = CliRunner().invoke(app, ["ask", "--db", str(concert_db), "How many singers are from France?"])
    assert out.exit_code == 0, out.output
    line = next(line for line in out.output.splitlines() if line.startswith("confidence:"))
    assert line == "confidence: low · 2 of 6 samples agree on the result"
    assert out.output.count("alternative (2 votes)") == 2
