"""Each pipeline stage as a plain function, with the scripted model."""

import pytest

from askchain.db import open_database
from askchain.generation.candidates import Candidate, dedupe
from askchain.generation.context import Example, GenerationContext
from askchain.generation.sql_text import extract_sql, normalize_sql
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.run import try_execute
from askchain.pipeline.stages import draft_agrees
from askchain.pipeline.revise import revision_loop
from askchain.pipeline.select import group_by_result, select_best
from askchain.pipeline.validate import Findings, validate_sql

#: The loop's budget in these tests unless one says otherwise: room for every revision, nothing standing for an
#: empty majority, revisions beside rows (the pipeline passes settings.yaml's values).
BUDGET = {"max_revisions": 8, "empty_answer_share": 1.0, "revise_beside_rows": True, "seed": 42}


def loop(candidates, **options):
    return revision_loop(candidates, **{**BUDGET, **options})


@pytest.fixture
def engine(concert_db_copy):
    return open_database(str(concert_db_copy))


@pytest.fixture
def ctx(engine):
    return GenerationContext("How many singers are from France?", "sqlite", "SQLite", engine.schema().ddl())


@pytest.mark.parametrize("reply,sql", [
    ("```sql\nSELECT 1\n```", "SELECT 1"),
    ("Here you go:\n```sql\nSELECT a FROM t;\n```\nThis selects a.", "SELECT a FROM t"),
    ("SELECT a FROM t; SELECT b FROM t", "SELECT a FROM t"),
    ("-- plan: t -> a\nSELECT a FROM t", "SELECT a FROM t"),
    ("```sql\n-- part: x => y\nSELECT ';' FROM t\n```", "SELECT ';' FROM t"),
    ("-- plan: a with b -> c\n\nSELECT a FROM t", "SELECT a FROM t"),  # "with" in a comment is no CTE
    ("SELECT a FROM t WHERE b = '--x' -- part: keep the string", "SELECT a FROM t WHERE b = '--x'"),
    ("SELECT id FROM u WHERE c = 'x'\n\n-- part: count them\nSELECT count(*) FROM t WHERE id IN (SELECT id FROM u)",
     "SELECT count(*) FROM t WHERE id IN (SELECT id FROM u)"),  # one statement per sub-question: the last is the answer
    ("WITH x AS (SELECT 1 AS a)\nSELECT a FROM x", "WITH x AS (SELECT 1 AS a)\nSELECT a FROM x"),
    ("Sure! The query is SELECT a FROM t", "SELECT a FROM t"),
])
def test_extract_sql(reply, sql):
    assert extract_sql(reply) == sql


def test_dedupe_by_normalised_form():
    cands = [Candidate("select count(*) from singer", "a"), Candidate("SELECT COUNT(*)  FROM singer", "b"), Candidate("SELECT 1", "c")]
    assert [c.generator for c in dedupe(cands, "sqlite")] == ["a", "c"]


def test_revision_lifecycle(engine, ctx):
    """A failing and an empty candidate are revised; a repeated SQL is never executed twice; rounds are capped."""
    fixes = iter(["```sql\nSELECT count(*) FROM singer WHERE Country = 'France'\n```", "```sql\nSELECT count(*) FROM singer\n```"])
    model = ScriptedModel(lambda request, i: next(fixes))
    executed = []

    def execute(sql):
        executed.append(sql)
        return try_execute(engine, sql)

    candidates = [
        Candidate("SELECT count(*) FROM singer WHERE Country = 'France'", "direct"),
        Candidate("SELECT Name FROM singer WHERE Country = 'france'", "direct"),  # empty result
        Candidate("SELECT cnt FROM singer", "direct"),  # invalid: never executed
    ]
    executions = loop(
        candidates, ctx=ctx, model=model, key=lambda s: normalize_sql(s, "sqlite"),
        validate=lambda s: validate_sql(s, engine.schema()), execute=execute, rounds=5,
    )
    statuses = {ex.candidate.sql: ex.status for ex in executions}
    assert statuses["SELECT Name FROM singer WHERE Country = 'france'"] == "empty"
    assert statuses["SELECT cnt FROM singer"] == "invalid"
    assert statuses["SELECT count(*) FROM singer"] == "success"
    assert "SELECT cnt FROM singer" not in executed
    assert len(executed) == len(set(executed))  # the revision equal to an executed query is not re-run
    assert any(r.template == "revise" and "Column 'cnt' does not exist" in r.values["problem"] for r in model.requests)


def test_revision_stops_after_the_round_limit(engine, ctx):
    model = ScriptedModel(lambda request, i: f"SELECT missing_{len(model.requests)} FROM singer")
    executions = loop(
        [Candidate("SELECT missing FROM singer", "direct")], ctx=ctx, model=model, key=lambda s: s,
        validate=lambda s: validate_sql(s, engine.schema()), execute=lambda s: try_execute(engine, s), rounds=2,
    )
    assert len(model.requests) == 2 and len(executions) == 3


def _executions(engine, ctx, sqls):
    return loop(
        [Candidate(s, "direct") for s in sqls], ctx=ctx, model=ScriptedModel([]), key=lambda s: s,
        validate=lambda s: validate_sql(s, engine.schema()), execute=lambda s: try_execute(engine, s), rounds=0,
    )


def test_grouping_ignores_row_order_without_order_by(engine, ctx):
    execs = _executions(engine, ctx, [
        "SELECT Name FROM singer WHERE Age > 40",
        "SELECT Name FROM singer WHERE Age > 40 ORDER BY Name DESC",
        "SELECT Name FROM singer WHERE Age >= 41",
        "SELECT Name FROM singer",
    ])
    sizes = sorted(len(g.members) for g in group_by_result(execs, "sqlite"))
    assert sizes == [1, 1, 2]


def test_single_group_needs_no_tournament(engine, ctx):
    model = ScriptedModel([])
    executions = _executions(engine, ctx, ["SELECT count(*) FROM singer", "SELECT count(Name) FROM singer"])
    sel = select_best(executions, ctx=ctx, model=model, method="tournament")
    assert sel.reason == "all successful candidates agree" and not model.requests


def test_tournament_picks_the_judged_winner_over_the_majority(engine, ctx):
    execs = _executions(engine, ctx, [
        "SELECT count(*) FROM singer", "SELECT count(Name) FROM singer",
        "SELECT count(*) FROM singer WHERE Country = 'France'",
    ])

    def judge(request, i):
        return '{"winner": "%s"}' % ("A" if "France" in request.values["sql_a"] else "B")

    sel = select_best(execs, ctx=ctx, model=ScriptedModel({"judge": judge}), method="tournament")
    assert sel.reason == "tournament" and "France" in sel.chosen.candidate.sql
    assert len(sel.matches) == 1


def test_nothing_succeeded_returns_the_best_failure(engine, ctx):
    execs = _executions(engine, ctx, ["SELECT nope FROM singer", "SELECT Name FROM singer WHERE Age > 1000"])
    sel = select_best(execs, ctx=ctx, model=ScriptedModel([]), method="tournament")
    assert sel.chosen.status == "empty" and sel.reason == "no candidate succeeded"


def test_duplicate_samples_vote_and_a_clear_majority_needs_no_tournament(engine, ctx):
    samples = ["SELECT count(*) FROM singer"] * 2 + ["SELECT COUNT(*) FROM singer", "SELECT count(*) FROM singer WHERE Age > 40"]
    unique = dedupe([Candidate(s, "direct") for s in samples], "sqlite")
    assert [c.votes for c in unique] == [3, 1]
    execs = loop(unique, ctx=ctx, model=ScriptedModel([]), key=lambda s: s,
                          validate=lambda s: validate_sql(s, engine.schema()), execute=lambda s: try_execute(engine, s), rounds=0)
    assert [g.votes for g in group_by_result(execs, "sqlite")] == [3, 1]
    model = ScriptedModel([])
    sel = select_best(execs, ctx=ctx, model=model, majority_margin=3, method="tournament")
    assert sel.reason == "clear majority" and "WHERE" not in sel.chosen.candidate.sql and not model.requests
    judge = ScriptedModel(['{"winner": "A"}'])
    assert select_best(execs, ctx=ctx, model=judge, majority_margin=4, method="tournament").reason == "tournament"


@pytest.mark.parametrize("needed, agrees", [(0, False), (2, True), (3, True), (4, False)])
def test_the_draft_agrees_when_enough_samples_share_one_result(engine, ctx, needed, agrees):
    samples = ["SELECT count(*) FROM singer", "SELECT COUNT(*) FROM singer", "SELECT count(Name) FROM singer", "SELECT nope FROM singer"]
    execs = loop(dedupe([Candidate(s, "direct") for s in samples], "sqlite"), ctx=ctx, model=ScriptedModel([]),
                          key=lambda s: s, validate=lambda s: validate_sql(s, engine.schema()),
                          execute=lambda s: try_execute(engine, s), rounds=0)
    assert draft_agrees(execs, needed, "sqlite") is agrees


def test_a_revision_repeating_a_failed_query_is_revised_again(engine, ctx):
    """The first fix reproduces the broken query; the loop does not stop there but asks again (budget permitting)."""
    replies = iter(["```sql\nSELECT Name FROM singer WHERE Country = 'france'\n```",
                    "```sql\nSELECT Name FROM singer WHERE Country = 'France'\n```"])
    model = ScriptedModel(lambda request, i: next(replies))
    executions = loop(
        [Candidate("SELECT Name FROM singer WHERE Country = 'france'", "direct")], ctx=ctx, model=model,
        key=lambda s: normalize_sql(s, "sqlite"), validate=lambda s: validate_sql(s, engine.schema()),
        execute=lambda s: try_execute(engine, s), rounds=5,
    )
    assert [ex.status for ex in executions] == ["empty", "success"]
    assert len(model.requests) == 2 and model.requests[1].temperature > 0


def test_a_revision_reaching_a_successful_query_ends_the_loop(engine, ctx):
    model = ScriptedModel(lambda request, i: "```sql\nSELECT count(*) FROM singer\n```")
    executions = loop(
        [Candidate("SELECT count(*) FROM singer", "direct"), Candidate("SELECT nope FROM singer", "direct")], ctx=ctx,
        model=model, key=lambda s: normalize_sql(s, "sqlite"), validate=lambda s: validate_sql(s, engine.schema()),
        execute=lambda s: try_execute(engine, s), rounds=5,
    )
    assert len(model.requests) == 1 and len(executions) == 2


def test_the_vote_picks_the_largest_group_without_asking_the_model(engine, ctx):
    samples = ["SELECT count(*) FROM singer WHERE Country = 'France'"] * 2 + ["SELECT count(*) FROM singer"]
    execs = loop(dedupe([Candidate(s, "direct") for s in samples], "sqlite"), ctx=ctx, model=ScriptedModel([]),
                          key=lambda s: s, validate=lambda s: validate_sql(s, engine.schema()),
                          execute=lambda s: try_execute(engine, s), rounds=0)
    model = ScriptedModel([])
    sel = select_best(execs, ctx=ctx, model=model, method="vote")
    assert sel.reason == "majority vote" and "France" in sel.chosen.candidate.sql and not model.requests


def test_at_equal_votes_a_doubted_result_comes_after_one_that_is_not(engine, ctx):
    """A doubted lead (askchain.generation.semantic_doubt) drawn first loses a tie it would otherwise win."""
    candidates = [Candidate("SELECT count(*) FROM singer", "semantic", doubt="the question names another measure"),
                  Candidate("SELECT count(*) FROM singer WHERE Country = 'France'", "direct")]
    execs = loop(candidates, ctx=ctx, model=ScriptedModel([]), key=lambda s: s,
                 validate=lambda s: validate_sql(s, engine.schema()), execute=lambda s: try_execute(engine, s), rounds=0)
    assert [g.doubted for g in group_by_result(execs, "sqlite")] == [False, True]
    sel = select_best(execs, ctx=ctx, model=ScriptedModel([]), method="vote")
    assert "France" in sel.chosen.candidate.sql


def test_the_revision_budget_goes_to_the_most_promising_failure_first(engine, ctx):
    """More samples behind a failure first, then fewer problems, then the shorter query."""
    problems = {
        "SELECT a FROM singer": ["a is unknown", "no GROUP BY"],  # two problems, though short
        "SELECT b FROM singer WHERE Country = 'France'": ["b is unknown"],  # one problem, longer
        "SELECT c FROM singer": ["c is unknown"],  # one problem, shortest
        "SELECT d FROM singer WHERE Country = 'France' ORDER BY Name": ["d is unknown", "no GROUP BY"],  # two samples
    }
    failures = [Candidate(sql, "direct", votes=2 if sql.startswith("SELECT d") else 1) for sql in problems]
    model = ScriptedModel(lambda request, i: "```sql\nSELECT count(*) FROM singer\n```")
    loop(failures, ctx=ctx, model=model, key=lambda s: s, validate=lambda s: Findings(list(problems.get(s, []))),
                  execute=lambda s: try_execute(engine, s), rounds=1, max_revisions=3)
    revised = [request.values["sql"] for request in model.requests]
    assert revised == ["SELECT d FROM singer WHERE Country = 'France' ORDER BY Name", "SELECT c FROM singer",
                       "SELECT b FROM singer WHERE Country = 'France'"]


NO_ROWS = "SELECT Name FROM singer WHERE Country = 'Atlantis'"
ROWS = "SELECT Name FROM singer WHERE Country = 'France'"


@pytest.mark.parametrize("samples, stands", [
    ([NO_ROWS] * 4 + [ROWS, "SELECT nope FROM singer"], True),  # 4 of 6 votes: no rows is the answer
    ([NO_ROWS] * 3 + [ROWS] * 3, False),  # half is no majority: the empty samples are revised
])
def test_an_empty_result_most_samples_agree_on_is_the_answer(engine, ctx, samples, stands):
    model = ScriptedModel(lambda request, i: f"```sql\n{ROWS}\n```")
    execs = loop(dedupe([Candidate(s, "direct") for s in samples], "sqlite"), ctx=ctx, model=model,
                          key=lambda s: normalize_sql(s, "sqlite"), validate=lambda s: validate_sql(s, engine.schema()),
                          execute=lambda s: try_execute(engine, s), rounds=5, empty_answer_share=0.5)
    assert (len(model.requests) == 0) is stands  # standing, nothing is revised, not even the broken sample
    sel = select_best(execs, ctx=ctx, model=ScriptedModel([]), method="vote", empty_answer_share=0.5)
    assert (sel.chosen.candidate.sql == NO_ROWS and sel.chosen.status == "empty") is stands
    always_revise = select_best(execs, ctx=ctx, model=ScriptedModel([]), method="vote", empty_answer_share=1.0)
    assert always_revise.chosen.candidate.sql == ROWS


def test_no_rows_never_outvote_a_governed_query_that_found_rows(engine, ctx):
    governed = Candidate(ROWS, "semantic", reading="singers from France")
    execs = loop(dedupe([governed] + [Candidate(NO_ROWS, "direct", votes=4)], "sqlite"), ctx=ctx,
                 model=ScriptedModel(lambda request, i: f"```sql\n{NO_ROWS}\n```"),
                 key=lambda s: normalize_sql(s, "sqlite"), validate=lambda s: validate_sql(s, engine.schema()),
                 execute=lambda s: try_execute(engine, s), rounds=1, empty_answer_share=0.5)
    sel = select_best(execs, ctx=ctx, model=ScriptedModel([]), method="vote", empty_answer_share=0.5)
    assert sel.chosen.candidate.sql == ROWS


@pytest.mark.parametrize("beside_rows, revised", [(True, 1), (False, 0)])
def test_failures_beside_rows_are_revised_only_when_asked(engine, ctx, beside_rows, revised):
    model = ScriptedModel(lambda request, i: f"```sql\n{ROWS}\n```")
    samples = [ROWS, "SELECT nope FROM singer"]
    loop(dedupe([Candidate(s, "direct") for s in samples], "sqlite"), ctx=ctx, model=model,
                  key=lambda s: normalize_sql(s, "sqlite"), validate=lambda s: validate_sql(s, engine.schema()),
                  execute=lambda s: try_execute(engine, s), rounds=5, revise_beside_rows=beside_rows)
    assert len(model.requests) == revised


@pytest.mark.parametrize("example_db, source", [
    ("concert_singer", "(this database)"), ("", "(this database)"), ("pets_1", "(other databases; patterns only)"),
])
def test_examples_say_whether_they_come_from_this_database(engine, example_db, source):
    ctx = GenerationContext(
        "How many singers?", "sqlite", "SQLite", engine.schema().ddl(), db_id=engine.schema().db_id,
        examples=[Example("How many pets?", "SELECT count(*) FROM pets", example_db)],
    )
    user = ctx.prefix()[1]["content"]
    assert f"-- Examples of questions and their SQL {source}:" in user and "-- Q: How many pets?" in user


@pytest.mark.parametrize("linking,shared", [("never", True), ("auto", True), ("always", False)])
def test_the_schema_prompt_is_shared_by_every_question_unless_schema_linking_applies(engine, linking, shared):
    """What `askchain prepare` evaluates ahead: the prompt every draft over the schema begins with."""
    from askchain.config import get_settings
    from askchain.pipeline.methods import method_settings
    from askchain.pipeline.run import Models, Run
    from askchain.pipeline.stages import build_context, schema_prompt_prefix

    settings = method_settings(get_settings().with_overrides(pipeline={"schema_linking": linking}), "pipeline")
    run = Run("", engine, Models.single(ScriptedModel([])), settings)
    prefix = schema_prompt_prefix(run)
    if not shared:
        assert prefix is None
        return
    asked = build_context({"question": "How many singers are from France?"}, run)[0]["context"].messages(
        "askchain.generation", "direct")
    assert prefix[0] == asked[0] and asked[1]["content"].startswith(prefix[1]["content"].rstrip())
    assert "CREATE TABLE" in prefix[1]["content"] and "How many singers" not in prefix[1]["content"]
