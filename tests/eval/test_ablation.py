"""Rules switched off by id, and the ablation that asks again only the questions a rule acted on
(askchain.eval.ablation, `pipeline.rules_off`)."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from askchain.cli import main
from askchain.config import get_settings
from askchain.errors import ConfigError, DatasetError
from askchain.eval.ablation import acted_on, questions_to_ask, rules_table
from askchain.eval.results import read_results
from askchain.eval.runner import run_eval
from askchain.llm.fake import ScriptedModel
from askchain.rules.registry import rules_for

#: A question the model answers with a LIMIT nobody asked for (the unasked_limit repair drops it), and one it
#: answers as its gold query, which no rule touches.
LIMITED = "List the names of all singers from France."
PLAIN = "How many singers are there?"
REPLIES = {LIMITED: "SELECT Name FROM singer WHERE Country = 'France' LIMIT 3", PLAIN: "SELECT count(*) FROM singer"}


def scripted() -> ScriptedModel:
    return ScriptedModel({"direct": lambda request, i: REPLIES[request.values["question"]]})


def two_questions(spider):
    """The sample with just the two questions."""
    return dataclasses.replace(spider, examples=[e for e in spider.examples if e.question in REPLIES])


def write_run(folder, records, traces, executions, rules_off=()):
    """A results folder and its traces: `executions` maps a question id to its executions' rule ids."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"method": "pipeline", "pipeline_settings": {"rules_off": list(rules_off)}}))
    (folder / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    traces.mkdir(parents=True, exist_ok=True)
    for record in records:
        stage = {"stage": "draft", "executions": [{"sql": "SELECT 1", "status": "success", **({} if ids is None else {"rules": ids})}
                                                  for ids in executions[record["id"]]]}
        (traces / f"{record['run_id']}.json").write_text(json.dumps({"stages": [stage]}))


RECORDS = [{"id": "a", "run_id": "ra", "correct": {"spider2": True}}, {"id": "b", "run_id": "rb", "correct": {"spider2": False}}]


def test_a_switched_off_rule_is_left_out_and_an_unknown_id_is_a_settings_error():
    assert "unasked_limit" in {rule.id for rule in rules_for(None)}
    assert "unasked_limit" not in {rule.id for rule in rules_for(None, ["unasked_limit"])}
    with pytest.raises(ConfigError, match=r"names no rule: no_such_rule \(the rules: .*unasked_limit") as error:
        rules_for(None, ["no_such_rule"])
    assert "\n" not in str(error.value) and "tests/" not in str(error.value)  # one line, nothing the package lacks


def test_only_the_questions_a_switched_off_rule_acted_on_are_asked_again(tmp_path):
    write_run(tmp_path / "base", RECORDS, tmp_path / "traces", {"a": [["unasked_limit"], []], "b": [["columns"]]})
    assert questions_to_ask(tmp_path / "base", tmp_path / "traces", ["unasked_limit"]) == {"a"}
    assert questions_to_ask(tmp_path / "base", tmp_path / "traces", ["syntax"]) == set()
    # the shorthands are shown in prompts: switched off, every question may change
    assert questions_to_ask(tmp_path / "base", tmp_path / "traces", ["shorthands"]) == {"a", "b"}
    table = rules_table(tmp_path / "base", tmp_path / "traces", "spider2")
    assert "| unasked_limit | repair | 1 | 1 | a |" in table and "| columns | check | 1 | 0 | b |" in table


def test_a_run_that_cannot_tell_where_rules_acted_is_no_baseline(tmp_path):
    write_run(tmp_path / "old", RECORDS, tmp_path / "traces", {"a": [None], "b": [[]]})
    with pytest.raises(DatasetError, match="does not record which rules acted"):
        acted_on(RECORDS, tmp_path / "traces")
    write_run(tmp_path / "off", RECORDS, tmp_path / "traces2", {"a": [[]], "b": [[]]}, rules_off=["columns"])
    with pytest.raises(DatasetError, match="ran with columns off"):
        questions_to_ask(tmp_path / "off", tmp_path / "traces2", ["unasked_limit"])


def test_an_ablation_asks_again_only_where_the_rule_acted_and_copies_the_rest(spider, tmp_path):
    settings = get_settings().with_overrides(pipeline={"rules_off": []})  # every rule on, the default's aside
    spider = two_questions(spider)
    base = run_eval(spider, "pipeline", scripted(), settings, out_dir=tmp_path / "base")
    by_question = {r["question"]: r for r in base.records}
    assert by_question[LIMITED]["correct"]["spider"] and by_question[PLAIN]["correct"]["spider"]  # the LIMIT dropped

    traces = settings.paths.traces()
    rerun = questions_to_ask(tmp_path / "base", traces, ["unasked_limit"])
    assert rerun == {by_question[LIMITED]["id"]}
    model = scripted()
    off = settings.with_overrides(pipeline={"rules_off": ["unasked_limit"]})
    ablated = run_eval(spider, "pipeline", model, off, out_dir=tmp_path / "off", reuse=[tmp_path / "base"],
                       rerun=rerun, reuse_despite=("rules_off",))
    asked = {request.values["question"] for request in model.requests if "question" in request.values}
    assert asked == {LIMITED}
    after = {r["question"]: r for r in read_results(ablated.out_dir)}
    assert not after[LIMITED]["correct"]["spider"] and after[PLAIN]["correct"]["spider"]
    with pytest.raises(DatasetError, match="ran with unasked_limit off"):  # no baseline for turning it back on
        questions_to_ask(tmp_path / "off", traces, [])
    with pytest.raises(DatasetError, match="a run of something else"):  # without the ablation's allowance
        run_eval(spider, "pipeline", scripted(), off, out_dir=tmp_path / "other", reuse=[tmp_path / "base"])


def test_the_commands_refuse_bad_input_with_one_line(tmp_path, monkeypatch, capsys, spider_sample_root):
    cases = [(["eval", "rules", str(tmp_path)], "no pipeline run"),
             (["eval", "spider", "--data", str(spider_sample_root), "--method", "pipeline", "--off", "no_such_rule",
               "--out", str(tmp_path / "o")], "names no rule: no_such_rule")]
    for argv, message in cases:
        monkeypatch.setattr(sys, "argv", ["askchain", *argv])
        with pytest.raises(SystemExit) as stop:
            main()
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "o").exists()
