"""The command line: results as JSON, and bad input as one line on stderr with exit code 2."""

import json
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "askchain.cli"]


def run(*args, env=None):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600, env=env)


def test_sql_json(spider_db):
    out = run("sql", "--db", str(spider_db), "SELECT Name FROM singer ORDER BY Age DESC LIMIT 2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["columns"] == ["Name"] and len(data["rows"]) == 2 and data["truncated"] is False


@pytest.mark.parametrize("args,message", [
    (["sql", "--db", "{db}", "DROP TABLE singer"], "only read-only queries"),
    (["sql", "--db", "{db}", "WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x"], "read-only"),
    (["sql", "--db", "{db}", "SELECT * FROM read_csv('/etc/passwd')"], "not allowed"),
    (["sql", "--db", "/no/such.db", "SELECT 1"], "does not exist"),
    (["ask", "--db", "{db}", "   "], "question is empty"),
    (["ask", "--db", "{db}", "How many singers?", "--model", "gpt-99"], "unknown model"),
    (["ask", "--db", "{db}", "How many singers?", "--method", "magic"], "unknown method"),
])
def test_bad_input_is_one_line_and_exit_2(spider_db, args, message):
    out = run(*[a.replace("{db}", str(spider_db)) for a in args])
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.llm
def test_ask_end_to_end_with_the_embedded_model(spider_db):
    out = run("ask", "--db", str(spider_db), "How many singers are there?", "--method", "baseline", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["rows"] == [[6]] and data["error"] is None
    assert data["usage"]["completion_tokens"] > 0 and data["elapsed_s"] > 0
