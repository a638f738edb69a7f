"""The whole graph with the scripted model: every stage streams events and lands in the trace."""

import json

from askchain import ask
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel

RIGHT = "```sql\nSELECT count(*) FROM singer WHERE Country = 'France'\n```"


def script(request, i):
    last = request.messages[-1][1]
    if '"winner"' in last:
        return '{"winner": "A"}' if "France" in last.split("-- Candidate B:")[0] else '{"winner": "B"}'
    if '"verdict"' in last:
        return '{"verdict": "wrong", "problem": "filter on France"}' if "France" not in last.split("-- Its result")[0] else '{"verdict": "correct"}'
    if "example questions" in last:
        return '{"examples": [{"question": "How many singers?", "sql": "SELECT count(*) FROM singer"}]}'
    if "is wrong" in last:
        return RIGHT
    return [RIGHT, "```sql\nSELECT count(*) FROM singer\n```", "SELECT nam FROM singer"][i % 3]


def test_pipeline_runs_every_stage_and_traces_it(spider_db):
    settings = get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "answer": False})
    events = []
    result = ask("How many singers are from France?", str(spider_db), method="pipeline", model=ScriptedModel(script),
                 settings=settings, on_event=events.append)
    assert result.error is None and "France" in result.sql and result.rows == [[4]]
    started = [e["stage"] for e in events if e.get("status") == "start"]
    for name in ("examples", "schema_linking", "values", "build_context", "direct", "divide_and_conquer",
                 "query_plan", "role_play", "synthetic", "revise", "select"):
        assert name in started
    trace = json.loads((settings.paths.data("traces", "x").parent / f"{result.run_id}.json").read_text())
    stages = {s["stage"]: s for s in trace["stages"]}
    generators = {g for s in trace["stages"] for g in [s["stage"]] if s.get("candidates")}
    assert generators == {"direct", "divide_and_conquer", "query_plan", "role_play", "synthetic"}
    first_round = stages["revise"]["rounds"][0]
    assert any(ex["status"] == "invalid" for ex in first_round)
    assert len(stages["revise"]["rounds"]) == 2, "the invalid candidate was revised (into an already-run query)"
    assert stages["select"]["chosen"] == result.sql
    assert stages["select"]["reason"] == "tournament" and stages["select"]["matches"]
