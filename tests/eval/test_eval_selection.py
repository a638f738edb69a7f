"""The selection audit: a pipeline run's disagreeing groups replayed under the vote and the judge's tournament."""

import json

import pytest

from askchain.config import get_settings
from askchain.errors import DatasetError
from askchain.eval.selection import audit_selection, render_audit
from askchain.llm.fake import ScriptedModel

MAJORITY_WRONG = "SELECT count(*) FROM singer WHERE Age > 40"
MINORITY_RIGHT = "SELECT count(*) FROM singer"


def _pipeline_run(folder, spider_sample_root, groups, method="pipeline"):
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({
        "dataset": "spider", "split": "dev", "source": str(spider_sample_root / "dev.json"), "method": method,
        "comparator": "spider",
    }))
    (folder / "results.jsonl").write_text(json.dumps({"id": "spider-dev-0000", "run_id": "run-1", "gold_error": None}) + "\n")
    traces = get_settings().paths.traces()
    traces.mkdir(parents=True, exist_ok=True)
    (traces / "run-1.json").write_text(json.dumps({"run_id": "run-1", "stages": [
        {"stage": "values", "value_hints": []}, {"stage": "select", "groups": groups},
    ]}))


def _judge_for(sql):
    """A judge that prefers `sql` wherever it stands."""
    def script(request, i):
        a = request.messages[-1][1].split("-- Candidate A:")[1].split("-- Result A")[0]
        return '{"winner": "%s"}' % ("A" if a.strip() == sql else "B")
    return script


def test_the_audit_scores_the_vote_and_the_tournament(tmp_path, spider_sample_root):
    _pipeline_run(tmp_path / "run", spider_sample_root, [
        {"sql": MAJORITY_WRONG, "votes": 4, "generators": ["direct"]},
        {"sql": MINORITY_RIGHT, "votes": 2, "generators": ["direct"]},
    ])
    audit = audit_selection(tmp_path / "run", ScriptedModel(_judge_for(MINORITY_RIGHT)), get_settings())
    assert (audit.questions, audit.some_right, audit.vote_right, audit.tournament_right) == (1, 1, 0, 1)
    assert sum(audit.verdicts.values()) == 1
    assert "| fake:scripted | 1 | 1 | 0 | 1 |" in render_audit(audit, "fake:scripted")


def test_a_judge_that_always_says_a_shows_in_its_verdicts(tmp_path, spider_sample_root):
    _pipeline_run(tmp_path / "run", spider_sample_root, [
        {"sql": MAJORITY_WRONG, "votes": 3}, {"sql": MINORITY_RIGHT, "votes": 2},
        {"sql": "SELECT count(*) FROM singer WHERE Age < 30", "votes": 1},
    ])
    audit = audit_selection(tmp_path / "run", ScriptedModel(lambda request, i: '{"winner": "A"}'), get_settings())
    assert audit.verdicts == {"A": 3} and "(100 % A)" in render_audit(audit, "m")


def test_the_audit_needs_a_pipeline_run_with_disagreement(tmp_path, spider_sample_root):
    _pipeline_run(tmp_path / "sc", spider_sample_root, [], method="self-consistency")
    with pytest.raises(DatasetError, match="needs a pipeline run"):
        audit_selection(tmp_path / "sc", ScriptedModel([]), get_settings())
    _pipeline_run(tmp_path / "agreed", spider_sample_root, [{"sql": MINORITY_RIGHT, "votes": 6}])
    with pytest.raises(DatasetError, match="no question"):
        audit_selection(tmp_path / "agreed", ScriptedModel([]), get_settings())
    with pytest.raises(DatasetError, match="not an `askchain eval` results folder"):
        audit_selection(tmp_path / "nowhere", ScriptedModel([]), get_settings())
