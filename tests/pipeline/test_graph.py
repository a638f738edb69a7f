"""The whole graph with the scripted model: every stage streams events and lands in the trace."""

import json

from askchain import ask
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel

RIGHT = "```sql\nSELECT count(*) FROM singer WHERE Country = 'France'\n```"


ALL_ON = {name: {"enabled": True} for name in ("direct", "divide_and_conquer", "query_plan", "role_play", "synthetic")}


def samples(request, i):
    return [RIGHT, "```sql\nSELECT count(*) FROM singer\n```", "SELECT nam FROM singer"][i % 3]


# Replies by prompt template: every generator samples the same three queries, the reviser fixes, the judge and the
# professor prefer the France filter.
script = {
    **{name: samples for name in ("direct", "divide_and_conquer", "query_plan", "student", "synthetic")},
    "synthetic_examples": '{"examples": [{"question": "How many singers?", "sql": "SELECT count(*) FROM singer"}]}',
    "professor": lambda request, i: (
        '{"verdict": "correct"}' if "France" in request.values["sql"] else '{"verdict": "wrong", "problem": "filter on France"}'
    ),
    "revise": RIGHT,
    "judge": lambda request, i: '{"winner": "%s"}' % ("A" if "France" in request.values["sql_a"] else "B"),
}


def test_pipeline_runs_every_stage_and_traces_it(concert_db):
    settings = get_settings().with_overrides(
        pipeline={"examples_k": 0, "value_retrieval": False, "answer": False, "selection": "tournament", "majority_margin": 0,
                  "generators": ALL_ON, "revise_beside_rows": True}  # revision beside rows: every stage has work
    )
    events = []
    result = ask("How many singers are from France?", str(concert_db), method="pipeline", model=ScriptedModel(script),
                 settings=settings, on_event=events.append)
    assert result.error is None and "France" in result.sql and result.rows == [[4]]
    started = [e["stage"] for e in events if e.get("status") == "start"]
    for name in ("schema_linking", "build_context", "draft", "divide_and_conquer", "query_plan", "role_play",
                 "synthetic", "revise", "select"):
        assert name in started
    assert not {"examples", "values", "answer"} & set(started), "stages switched off are not in the graph"
    trace = json.loads((settings.paths.traces() / f"{result.run_id}.json").read_text())
    stages = {s["stage"]: s for s in trace["stages"]}
    generators = {g for s in trace["stages"] for g in [s["stage"]] if s.get("candidates")}
    assert generators == {"draft", "divide_and_conquer", "query_plan", "role_play", "synthetic"}
    assert stages["draft"]["agreed"] is False
    first_round = stages["revise"]["rounds"][0]
    draft_votes = {ex["sql"]: ex["votes"] for ex in first_round if ex["generator"] == "direct"}
    assert sum(draft_votes.values()) == len(stages["draft"]["candidates"]) + sum(
        len(stages[g]["candidates"]) for g in ("divide_and_conquer", "query_plan", "role_play", "synthetic")
    ), "every sample votes once (the generate_sql subgraph must not hand the draft's samples back twice)"
    assert any(ex["status"] == "invalid" for ex in first_round)
    assert len(stages["revise"]["rounds"]) == 2, "the invalid candidate was revised (into an already-run query)"
    assert stages["select"]["chosen"] == result.sql
    assert stages["select"]["reason"] == "tournament" and stages["select"]["matches"]


def test_agreeing_drafts_skip_the_other_generators(concert_db):
    settings = get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "answer": False})
    model = ScriptedModel(lambda request, i: ["```sql\nSELECT count(*) FROM singer\n```", "SELECT COUNT(*) FROM singer",
                                              "select count(Singer_ID) from singer"][i % 3])
    events = []
    result = ask("How many singers are there?", str(concert_db), method="pipeline", model=model, settings=settings,
                 on_event=events.append)
    assert result.rows == [[6]] and len(model.requests) == 1  # the draft's samples, one request, nothing else
    started = {e["stage"] for e in events if e.get("status") == "start"}
    assert "draft" in started and "select" in started
    assert not started & {"divide_and_conquer", "query_plan", "role_play", "synthetic", "revise"}


def test_a_repair_that_fails_leaves_the_candidate_to_validation(concert_db, monkeypatch, caplog):
    """A bug in one repair rule must not stop the question: the candidate goes on as written."""
    def broken(self, analysis):
        raise RuntimeError("a bug")

    monkeypatch.setattr("askchain.rules.repairs.qualifiers.KnownQualifiers.repair", broken)
    settings = get_settings().with_overrides(llm={"cache": False},
                                             pipeline={"examples_k": 0, "value_retrieval": False, "answer": False})
    result = ask("How many singers are there?", str(concert_db), method="pipeline",
                 model=ScriptedModel(lambda request, i: "SELECT count(*) FROM singer"), settings=settings)
    assert result.error is None and result.rows == [[6]]
    assert "a repair failed on a candidate and was skipped: RuntimeError: a bug" in caplog.text


def test_docs_picture_matches_the_code():
    """docs/pipeline.md is generated by `askchain graph`; regenerate it when the graph changes."""
    from pathlib import Path

    from askchain.pipeline.graph import drawable_graph

    docs = Path(__file__).resolve().parents[2] / "docs" / "pipeline.md"
    assert drawable_graph(get_settings().pipeline).draw_mermaid() in docs.read_text()


def test_with_only_the_draft_enabled_disagreement_goes_to_revision(concert_db):
    """The default configuration: no other generator, so a disagreeing draft is revised and judged directly."""
    settings = get_settings().with_overrides(pipeline={
        "examples_k": 0, "value_retrieval": False, "answer": False, "selection": "tournament", "majority_margin": 0,
        "generators": {name: {"enabled": name == "direct"} for name in ALL_ON},
    })
    events = []
    result = ask("How many singers are from France?", str(concert_db), method="pipeline", model=ScriptedModel(script),
                 settings=settings, on_event=events.append)
    started = [e["stage"] for e in events if e.get("status") == "start"]
    assert started.index("draft") < started.index("revise") < started.index("select")
    assert not {"divide_and_conquer", "query_plan", "role_play", "synthetic"} & set(started)
    assert result.error is None and result.rows == [[4]]  # the judge picks the France filter over the plain count


def test_examples_come_from_the_questions_own_database_unless_scoped_to_all(concert_db, monkeypatch):
    import askchain.retrieval.examples as examples
    from askchain.db import open_database
    from askchain.pipeline.run import Models, Run
    from askchain.pipeline.stages import find_examples

    calls = []
    monkeypatch.setattr(examples, "retrieve_examples", lambda *a, **kw: calls.append(kw) or [])
    engine = open_database(str(concert_db))
    for scope, only_db in (("schema", "concert_singer"), ("all", None)):
        settings = get_settings().with_overrides(pipeline={"examples_k": 3, "examples_scope": scope})
        run = Run("How many singers?", engine, Models.single(ScriptedModel(lambda r, i: "")), settings, db_id="x")
        find_examples({"question": run.question}, run)
        assert calls[-1]["only_db"] == only_db and calls[-1]["exclude_db"] == "x"


def test_a_share_filtered_to_what_it_counts_is_answered_among_all_rows(concert_db):
    """The model restates the share's own condition in WHERE, which makes it 1 whatever the data: the condition
    leaves WHERE before validation, and the answer is France's share of all singers."""
    written = ("SELECT COUNT(CASE WHEN Country = 'France' THEN 1 END) * 1.0 / COUNT(*) FROM singer "
               "WHERE Country = 'France'")
    settings = get_settings().with_overrides(llm={"cache": False},
                                             pipeline={"examples_k": 0, "value_retrieval": False, "answer": False})
    model = ScriptedModel({"direct": f"```sql\n{written}\n```"})
    result = ask("What share of singers are from France?", str(concert_db), method="pipeline", model=model,
                 settings=settings)
    assert result.sql == "SELECT COUNT(CASE WHEN Country = 'France' THEN 1 END) * 1.0 / COUNT(*) FROM singer"
    assert result.rows == [[4 / 6]] and [r.template for r in model.requests] == ["direct"]


def test_a_limit_the_question_never_asks_for_leaves_the_answer(concert_db):
    """The model ends a list with LIMIT 3 by habit: the question asks for every singer from France, and gets all 4."""
    written = "SELECT Name FROM singer WHERE Country = 'France' ORDER BY Name LIMIT 3"
    settings = get_settings().with_overrides(llm={"cache": False},
                                             pipeline={"examples_k": 0, "value_retrieval": False, "answer": False})
    result = ask("List the singers from France by name.", str(concert_db), method="pipeline",
                 model=ScriptedModel({"direct": f"```sql\n{written}\n```"}), settings=settings)
    assert result.sql == "SELECT Name FROM singer WHERE Country = 'France' ORDER BY Name" and len(result.rows) == 4
