"""The runner on Spider-format questions (tests/eval/conftest.py) with a scripted model: EX, error classes, resuming, reports."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from askchain.config import get_settings
from askchain.db import open_database
from askchain.db.base import QueryResult
from askchain.errors import ConfigError, DatasetError
from askchain.eval.datasets import Example, load_domain_questions
from askchain.eval.results import RESULTS_FILE, classify_error, read_results
from askchain.eval.runner import judge_candidates, default_out_dir, run_eval, select_examples
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.result import AskResult


def _question(request) -> str:
    return request.messages[-1][1].split("-- Question: ")[-1].strip()


def answering(examples: list[Example], wrong: dict[int, str]):
    """A model replying with the gold SQL, except for the questions at the positions in `wrong`."""
    gold = {e.question: e.gold_sql for e in examples}
    position = {e.question: i for i, e in enumerate(examples)}

    def script(request, sample):
        question = _question(request)
        return f"```sql\n{wrong.get(position[question], gold[question])}\n```"

    return script


def test_select_examples_is_deterministic(spider):
    first = select_examples(spider.examples, 20, seed=7)
    assert first == select_examples(spider.examples, 20, seed=7)
    assert first != select_examples(spider.examples, 20, seed=8)
    assert len(first) == 20 and len({e.id for e in first}) == 20
    assert select_examples(spider.examples[:5], 50, seed=7) == spider.examples[:5]


def test_scores_scripted_answers_and_writes_report(spider, tmp_path):
    chosen = select_examples(spider.examples, 6, seed=7)
    wrong = {1: "SELECT -424242", 3: "SELECT nope FROM nowhere", 4: "SELECT count(* FROM singer"}
    model = ScriptedModel(answering(chosen, wrong))
    run = run_eval(spider, "baseline", model, get_settings(), limit=6, seed=7, out_dir=tmp_path)

    assert [r["id"] for r in run.records] == [e.id for e in chosen]
    assert [r["correct"]["spider"] for r in run.records] == [True, False, True, False, False, True]
    assert [r["error_class"] for r in run.records] == [
        "none", "wrong-result", "none", "no-such-table-or-column", "syntax", "none"
    ]
    assert [r["any_candidate_correct"] for r in run.records] == [r["correct"]["spider"] for r in run.records]
    first = run.records[0]
    assert first["difficulty"] in ("easy", "medium", "hard", "extra") and first["sql"] == chosen[0].gold_sql
    assert first["prompt_tokens"] > 0 and first["completion_tokens"] > 0 and first["n_candidates"] == 1

    report = json.loads((tmp_path / "report.json").read_text())
    assert report["ex"]["spider"] == 0.5 and report["evaluated"] == 6
    assert report["execution_error_rate"] == round(2 / 6, 4)
    assert report["oracle_rate"] == 0.5 and report["selected_right_when_some_candidate_right"] == 1.0
    assert sum(row["n"] for row in report["by_difficulty"].values()) == 6
    assert "| **all** | 6 |" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"


def test_resumes_without_asking_again(spider, tmp_path):
    chosen = select_examples(spider.examples, 4, seed=1)
    model = ScriptedModel(answering(chosen, {}))
    run_eval(spider, "baseline", model, get_settings(), limit=4, seed=1, out_dir=tmp_path)
    assert len(model.requests) == 4

    run = run_eval(spider, "baseline", model, get_settings(), limit=4, seed=1, out_dir=tmp_path)
    assert len(model.requests) == 4 and len(run.records) == 4

    lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
    (tmp_path / RESULTS_FILE).write_text("\n".join(lines[:2]) + "\n")  # as if interrupted after two questions
    run = run_eval(spider, "baseline", model, get_settings(), limit=4, seed=1, out_dir=tmp_path)
    assert len(model.requests) == 6
    assert [r["id"] for r in read_results(tmp_path)] == [e.id for e in chosen]
    assert all(r["correct"]["spider"] for r in run.records)

    with pytest.raises(DatasetError, match="holds another run .*seed=1"):
        run_eval(spider, "baseline", model, get_settings(), limit=4, seed=2, out_dir=tmp_path)


def test_first_stops_early_and_a_later_run_continues(spider, tmp_path):
    chosen = select_examples(spider.examples, 5, seed=3)
    model = ScriptedModel(answering(chosen, {}))
    run = run_eval(spider, "baseline", model, get_settings(), limit=5, seed=3, out_dir=tmp_path, first=2)
    assert [r["id"] for r in run.records] == [e.id for e in chosen[:2]] and len(model.requests) == 2

    run = run_eval(spider, "baseline", model, get_settings(), limit=5, seed=3, out_dir=tmp_path)
    assert [r["id"] for r in run.records] == [e.id for e in chosen] and len(model.requests) == 5


def test_refuses_to_mix_the_settings_a_method_reads(spider, tmp_path):
    chosen = select_examples(spider.examples, 2, seed=3)
    model = ScriptedModel(answering(chosen, {}))
    for method in ("baseline", "self-consistency"):
        run_eval(spider, method, model, get_settings(), limit=2, seed=3, out_dir=tmp_path / method, first=1)
    other_pipeline = get_settings().with_overrides(pipeline={"examples_k": 5, "value_retrieval": False})
    run = run_eval(spider, "baseline", model, other_pipeline, limit=2, seed=3, out_dir=tmp_path / "baseline")
    assert len(run.records) == 2  # knobs the baseline's own entry sets do not change its answers
    other_sampling = get_settings().with_overrides(
        methods={"self-consistency": {"generators": {"direct": {"n": 3}}}})
    with pytest.raises(DatasetError, match=r"holds another run \(pipeline_settings: generators="):
        run_eval(spider, "self-consistency", model, other_sampling, limit=2, seed=3, out_dir=tmp_path / "self-consistency")


def test_failed_gold_is_recorded_and_excluded(spider, tmp_path):
    good, bad = spider.examples[0], replace(spider.examples[1], gold_sql="SELECT missing_column FROM singer")
    dataset = replace(spider, examples=[good, bad])
    model = ScriptedModel(answering([good], {}))
    run = run_eval(dataset, "baseline", model, get_settings(), out_dir=tmp_path)
    assert len(model.requests) == 1  # the model is not asked a question that cannot be scored
    assert "no such column" in run.records[1]["gold_error"] and run.records[1]["correct"] is None
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["questions"], report["evaluated"], report["gold_failed"], report["ex"]["spider"]) == (2, 1, 1, 1.0)


def test_unknown_method_fails_before_any_work(spider, tmp_path):
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        run_eval(spider, "nope", ScriptedModel([]), get_settings(), limit=1, out_dir=tmp_path)
    assert not (tmp_path / RESULTS_FILE).exists()


def test_oracle_reexecutes_distinct_candidates(spider):
    example = spider.examples[0]  # SELECT count(*) FROM singer
    engine = spider.connect(example.db_id, get_settings())
    gold = engine.execute(example.gold_sql)
    candidates = [
        {"sql": "SELECT 1", "error": None, "generator": "direct"},
        {"sql": "select 1", "error": None, "generator": "query_plan"},
        {"sql": "SELECT nope", "error": "no such column: nope", "generator": "direct"},
        {"sql": "SELECT COUNT(*) FROM singer", "error": None, "generator": "role_play+revision"},
    ]
    result = AskResult(question=example.question, sql="SELECT 1", columns=["1"], rows=[[1]], candidates=candidates)
    judged = judge_candidates(result, engine, gold, example, "spider", selected_correct=False)
    assert verdicts(judged) == [("direct", False), ("role_play+revision", True)]
    assert verdicts(judge_candidates(result, engine, gold, example, "spider", selected_correct=False, cap=1)) == [
        ("direct", False)]


def verdicts(judged: list[dict]) -> list[tuple[str, bool]]:
    return [(j["generator"], j["right"]) for j in judged]


def test_judged_candidates_carry_their_sql_votes_and_a_key_equal_for_equal_results(spider):
    """So a run's result groups can be studied offline (how a vote with other weights would have chosen)."""
    example = spider.examples[0]  # SELECT count(*) FROM singer
    engine = spider.connect(example.db_id, get_settings())
    gold = engine.execute(example.gold_sql)
    candidates = [
        {"sql": "SELECT COUNT(*) FROM singer", "error": None, "generator": "semantic", "votes": 3, "round": 0},
        {"sql": "SELECT COUNT(singer_id) FROM singer", "error": None, "generator": "direct", "votes": 2, "round": 0},
        {"sql": "SELECT 1", "error": None, "generator": "direct+revision", "votes": 1, "round": 1},
    ]
    result = AskResult(question=example.question, sql="SELECT 1", columns=["1"], rows=[[1]], candidates=candidates)
    judged = judge_candidates(result, engine, gold, example, "spider", selected_correct=False)
    assert [(j["votes"], j["round"]) for j in judged] == [(3, 0), (2, 0), (1, 1)]
    assert [j["sql"] for j in judged] == [c["sql"] for c in candidates]
    assert judged[0]["result"] == judged[1]["result"] != judged[2]["result"]


def test_the_chosen_candidate_keeps_its_verdict_when_the_answer_qualifies_its_tables(concert_db):
    """Candidates name tables as the prompt showed them (short), the answer's SQL as the database's clients do."""
    engine = open_database(str(concert_db), query_dialect="bigquery", table_map={"shop.music.singer": "singer"})
    example = Example("q1", "concert_singer", "How many singers are there?", "SELECT COUNT(*) FROM singer")
    result = AskResult(question=example.question, sql=engine.qualified_sql("SELECT COUNT(*) FROM singer"),
                       candidates=[{"sql": "SELECT COUNT(*) FROM singer", "error": None, "generator": "direct"}])
    assert result.sql == "SELECT COUNT(*) FROM `shop.music.singer`"
    gold = QueryResult(["n"], [(-1,)], 0.0)  # running the candidate again would judge it wrong
    assert verdicts(judge_candidates(result, engine, gold, example, "spider", selected_correct=True)) == [
        ("direct", True)]


def test_generator_stats_count_right_and_only_right():
    from askchain.eval.report import generator_stats

    records = [
        {"candidates": [{"generator": "direct", "right": True}, {"generator": "query_plan+revision", "right": True}]},
        {"candidates": [{"generator": "direct", "right": False}, {"generator": "query_plan", "right": True}]},
        {"candidates": []},
    ]
    stats = generator_stats(records)
    assert stats["direct"] == {"questions": 2, "right": 1, "only_right": 0, "right_rate": 0.3333}
    assert stats["query_plan"] == {"questions": 2, "right": 2, "only_right": 1, "right_rate": 0.6667}


@pytest.mark.parametrize(
    "error, correct, pred_rows, gold_rows, expected",
    [
        (None, True, 3, 3, "none"),
        (None, False, 0, 3, "empty-result"),
        (None, False, 0, 0, "wrong-result"),
        (None, False, 2, 3, "wrong-result"),
        ("query stopped at the 30 s time limit", False, 0, 3, "timeout"),
        ("cannot parse the SQL as sqlite: Invalid expression", False, 0, 3, "syntax"),
        ('near "SELEC": syntax error', False, 0, 3, "syntax"),
        ("no such table: nowhere", False, 0, 3, "no-such-table-or-column"),
        ('Catalog Error: Table with name blocks does not exist!', False, 0, 3, "no-such-table-or-column"),
        ('Binder Error: Referenced column "x" not found in FROM clause!', False, 0, 3, "no-such-table-or-column"),
        ("only read-only queries are allowed, not DELETE", False, 0, 3, "refused"),
        ("empty SQL statement", False, 0, 3, "refused"),
        ("Column 'tokens.total_supply' cannot be read: tokens is not in the FROM of that query; JOIN tokens to read "
         "it", False, 0, 3, "no-such-table-or-column"),
        ("ambiguous column name: id", False, 0, 3, "runtime"),
        ("Column 'id' is ambiguous: a and b both have it; qualify it (a.id or b.id)", False, 0, 3, "runtime"),
        ("Catalog Error: Scalar Function with name foo does not exist!", False, 0, 3, "runtime"),
    ],
)
def test_error_classes(error, correct, pred_rows, gold_rows, expected):
    assert classify_error(error, correct, pred_rows, gold_rows) == expected


def test_eth_format_scores_with_spider2_and_its_order_flag(spider, tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = [
        {"id": "n", "question": "How many singers?", "gold_sql": "SELECT COUNT(*) AS n FROM singer", "difficulty": "easy"},
        {"id": "ages", "question": "Singer ages, oldest first?", "gold_sql": "SELECT age FROM singer ORDER BY age DESC",
         "difficulty": "medium", "order_matters": True},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    singers = spider.connect("concert_singer", get_settings())
    dataset = replace(load_domain_questions("ethereum", path), connect=lambda db_id, settings: singers)
    replies = {
        "How many singers?": "SELECT 'extra column', COUNT(*) FROM singer",  # extra columns are fine for spider2
        "Singer ages, oldest first?": "SELECT age FROM singer ORDER BY age",  # wrong order, and order matters
    }
    model = ScriptedModel(lambda request, i: replies[_question(request)])
    run = run_eval(dataset, "baseline", model, get_settings(), out_dir=tmp_path / "run")
    assert run.meta["comparator"] == "spider2"
    assert [r["correct"] for r in run.records] == [
        {"bird": False, "spider": False, "spider2": True},
        {"bird": True, "spider": False, "spider2": False},
    ]
    assert [r["error_class"] for r in run.records] == ["none", "wrong-result"]


def test_judged_columns_leave_the_answerers_own_labels_out(spider, tmp_path):
    path = tmp_path / "questions.jsonl"
    gold = "SELECT CASE WHEN age < 30 THEN '1: young' ELSE '2: older' END AS band, COUNT(*) AS singers FROM singer " \
           "GROUP BY band ORDER BY band"
    rows = [{"id": "bands", "question": "How many singers are under 30 and how many older?", "gold_sql": gold,
             "order_matters": True, "judged_columns": ["singers"]}]
    path.write_text(json.dumps(rows[0]))
    singers = spider.connect("concert_singer", get_settings())
    dataset = replace(load_domain_questions("ethereum", path), connect=lambda db_id, settings: singers)
    answers = [
        "SELECT CASE WHEN age < 30 THEN 'under 30' ELSE '30 and over' END, COUNT(*) FROM singer GROUP BY 1 ORDER BY MIN(age)",
        "SELECT CASE WHEN age < 30 THEN 'under 30' ELSE '30 and over' END, COUNT(*) FROM singer GROUP BY 1 ORDER BY MIN(age) DESC",
    ]
    verdicts = []
    for n, answer in enumerate(answers):
        model = ScriptedModel(lambda request, i, answer=answer: answer)
        run = run_eval(dataset, "baseline", model, get_settings(), out_dir=tmp_path / f"run{n}")
        verdicts.append(run.records[0]["correct"]["spider2"])
    assert verdicts == [True, False]  # other labels are fine; the counts must still come in the gold's order

    path.write_text(json.dumps({**rows[0], "judged_columns": ["count"]}))
    with pytest.raises(DatasetError, match="judged column"):
        run_eval(replace(load_domain_questions("ethereum", path), connect=lambda db_id, settings: singers), "baseline",
                 ScriptedModel(lambda request, i: answers[0]), get_settings(), out_dir=tmp_path / "bad")


def test_default_out_dir_names_the_run(spider):
    assert str(default_out_dir(spider, "baseline", "qwen2.5-coder-1.5b", 200, 7)) == "runs/eval/spider-baseline-qwen2.5-coder-1.5b-200-7"
    minidev = replace(spider, name="bird", split="minidev")
    assert default_out_dir(minidev, "pipeline", "openai:gpt-4o", None, 0).name == "bird_minidev-pipeline-openai_gpt-4o-all-0"
