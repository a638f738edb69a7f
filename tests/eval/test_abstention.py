"""`askchain eval abstention` on the fixture database with a scripted model: abstention and false-abstention rates, EX
by confidence level, resuming; and EX by confidence in every evaluation's report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from askchain.cli import app
from askchain.config import get_settings
from askchain.errors import DatasetError
from askchain.eval.abstention import SPIDER_UNANSWERABLE, QuestionSet, read_unanswerable, run_abstention
from askchain.eval.datasets import Dataset
from askchain.eval.results import read_results
from askchain.eval.runner import run_eval
from askchain.llm.fake import ScriptedModel

UNANSWERABLE = [
    {"id": "idk-1", "db_id": "concert_singer", "question": "What is the average ticket price of each concert?",
     "reason": "concert has no prices"},
    {"id": "idk-2", "db_id": "concert_singer", "question": "How many followers does each singer have?",
     "reason": "singer has no follower counts"},
]
#: A question whose six samples give three results: a 2-of-6 vote, low confidence, and a wrong answer.
SPLIT = "How many stadiums are there?"


def settings(**pipeline):
    """The model check switched on (`abstention: llm`, not the default) where a test does not say otherwise."""
    return get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "semantic_layer": False,
                                                   "abstention": "llm",
                                                   **pipeline})


def model_for(spider):
    gold = {e.question: e.gold_sql for e in spider.examples}

    def direct(request, i):
        question = request.values["question"]
        if question == SPLIT:
            return ["SELECT count(*) FROM singer", "SELECT 1", "SELECT count(*) FROM singer_in_concert"][i % 3]
        return gold.get(question, "SELECT 1")

    def place_words(request, i):  # the model places no word anywhere: every question asked about abstains
        return json.dumps({w.strip('"'): "none" for w in request.values["words"].split(", ")})

    return ScriptedModel({"direct": direct, "place_words": place_words})


@pytest.fixture
def sets(spider, tmp_path):
    path = tmp_path / "unanswerable.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in UNANSWERABLE))
    examples, reasons = read_unanswerable(path)
    idk = Dataset("idk", "default", str(path), examples, spider.connect, spider.comparator)
    return [QuestionSet("idk", False, idk, reasons), QuestionSet("spider", True, spider, {})]


def test_rates_and_ex_by_confidence(spider, sets, tmp_path):
    model = model_for(spider)
    out = run_abstention(tmp_path, "pipeline", model, settings(), limit=None, seed=0, out_dir=tmp_path / "run", sets=sets)
    asked_about = {r.values["question"] for r in model.requests if r.template == "place_words"}
    summary = json.loads((out / "report.json").read_text())

    assert summary["unanswerable"] == {"n": 2, "abstained": 2, "abstention_rate": 1.0}
    wrongly = sorted(q for q in asked_about if q not in {e["question"] for e in UNANSWERABLE})
    answerable = summary["answerable"]
    assert answerable["n"] == len(spider.examples) and answerable["abstained"] == len(wrongly)
    assert sorted(f["question"] for f in summary["false_abstentions"]) == wrongly
    assert summary["false_abstentions"] and all(f["why"].startswith("the model found no column for ") for f in summary["false_abstentions"])
    levels = answerable["confidence"]
    assert levels["high"]["ex"] == 1.0 and levels["low"] == {"n": 1, "ex": 0.0}  # only SPLIT is low, and wrong
    assert sum(level["n"] for level in levels.values()) == answerable["n"] - answerable["abstained"]
    report = (out / "report.md").read_text()
    assert "Abstained on **2 of 2** unanswerable questions (100.0%)" in report and "## EX by confidence" in report
    records = read_results(out)
    assert {r["set"] for r in records} == {"idk", "spider"}
    assert all(r["why"].startswith("the model found no column for ") and r["answer"].startswith("This data has no ")
               for r in records if r["set"] == "idk")

    # `askchain eval report` re-renders an abstention folder with its own report
    (out / "report.md").unlink()
    rendered = CliRunner().invoke(app, ["eval", "report", str(out)])
    assert rendered.exit_code == 0, rendered.output
    assert (out / "report.md").read_text() == report and "Abstained on **2 of 2**" in rendered.output

    # resumed: nothing is asked again
    before = len(model.requests)
    run_abstention(tmp_path, "pipeline", model, settings(), limit=None, seed=0, out_dir=out, sets=sets)
    assert len(model.requests) == before and len(read_results(out)) == len(records)
    with pytest.raises(DatasetError, match="another abstention run"):
        run_abstention(tmp_path, "baseline", model, settings(), limit=None, seed=0, out_dir=out, sets=sets)


def test_unanswerable_files_need_a_reason(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "db_id": "concert_singer", "question": "Why?"}) + "\n")
    with pytest.raises(DatasetError, match="needs id, question, reason and db_id"):
        read_unanswerable(path)


def test_the_shipped_unanswerable_sets():
    from askchain.domain import get_domain

    general, _ = read_unanswerable(SPIDER_UNANSWERABLE)
    ethereum, reasons = read_unanswerable(get_domain("ethereum").eval_file.with_name("unanswerable.jsonl"), "ethereum")
    assert len(general) >= 15 and len(ethereum) >= 15 and len(general) + len(ethereum) >= 30
    assert all(reasons[e.id]["concept"] for e in ethereum)
    assert len({e.id for e in general + ethereum}) == len(general) + len(ethereum)


def test_every_evaluation_reports_ex_by_confidence(spider, tmp_path):
    run = run_eval(spider, "pipeline", model_for(spider), settings(abstention="none"), limit=8, seed=3, out_dir=tmp_path)
    summary = json.loads((tmp_path / "report.json").read_text())
    assert sum(level["n"] for level in summary["by_confidence"].values()) == len(run.records)
    assert {r["confidence"] for r in run.records} <= {"high", "medium", "low"} and not any(r["abstained"] for r in run.records)
    assert "## EX by confidence" in (tmp_path / "report.md").read_text()
