"""`--method baseline` runs on the core install: answering with it imports none of the `pipeline` extra's packages
(LangGraph, torch, sentence-transformers, Qdrant, datasketch, RapidFuzz), which load only for the methods that use
them. Checked in a fresh interpreter, since this session's may have imported them for other tests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

PIPELINE_EXTRA = ("langgraph", "torch", "sentence_transformers", "qdrant_client", "datasketch", "rapidfuzz")

SCRIPT = """
import json, sys
from askchain import ask
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel

settings = get_settings().with_overrides(llm={"cache": False})
model = ScriptedModel(lambda request, i: "```sql\\nSELECT count(*) FROM singer\\n```")
result = ask("How many singers?", sys.argv[1], method=sys.argv[2], model=model, settings=settings)
loaded = sorted(name for name in json.loads(sys.argv[3]) if name in sys.modules)
print(json.dumps({"rows": result.rows, "loaded": loaded}))
"""


def _answer_in_a_fresh_interpreter(db: str, method: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, db, method, json.dumps(PIPELINE_EXTRA)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_baseline_imports_no_package_of_the_pipeline_extra(tmp_path):
    db = tmp_path / "singers.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO singer VALUES (?, ?)", [(1, "Ana"), (2, "Bo"), (3, "Cy")])
    for method in ("baseline", "self-consistency"):
        answered = _answer_in_a_fresh_interpreter(str(db), method)
        assert answered == {"rows": [[3]], "loaded": []}, method
