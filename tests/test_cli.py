"""The command line: results as JSON, and bad input as one line on stderr with exit code 2."""

import json
import os
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "askchain.cli"]


def run(*args, env=None):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600, env=env)


def test_sql_json(concert_db):
    out = run("sql", "--db", str(concert_db), "SELECT Name FROM singer ORDER BY Age DESC LIMIT 2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["columns"] == ["Name"] and len(data["rows"]) == 2 and data["truncated"] is False


def test_sql_prints_names_and_values_as_they_are(concert_db):
    out = run("sql", "--db", str(concert_db), """SELECT '[/x]' AS "[/y]", '[bold]b' AS c""")
    assert out.returncode == 0, out.stderr
    assert "[/y]" in out.stdout and "[/x]" in out.stdout and "[bold]b" in out.stdout


@pytest.mark.parametrize("args,message", [
    (["sql", "--db", "{db}", "DROP TABLE singer"], "only read-only queries"),
    (["sql", "--db", "{db}", "WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x"], "read-only"),
    (["sql", "--db", "{db}", "SELECT * FROM read_csv('/etc/passwd')"], "not allowed"),
    (["sql", "--db", "/no/such.db", "SELECT 1"], "does not exist"),
    (["ask", "--db", "{db}", "   "], "question is empty"),
    (["ask", "--db", "{db}", "How many singers?", "--model", "gpt-99"], "unknown model"),
    (["ask", "--db", "{db}", "How many singers?", "--method", "magic"], "unknown method"),
    (["ask", "--db", "{db}", "How many singers?", "--chart", "chart.jpg"], "use a .png or .svg file name"),
    # an invalid byte on the command line reaches Python as a lone surrogate (os.fsencode gives the byte back here)
    (["sql", "--db", "{db}", "SELECT 'caf\udce9'"], "the SQL is not valid UTF-8: byte 0xe9 at character 12"),
    (["ask", "--db", "{db}", "How many singers from \udcff?"], "the question is not valid UTF-8: byte 0xff"),
    (["sql", "--db", "{db}", "--max-rows", "-1", "SELECT 1"], "the row cap must be between 1 and"),
    (["sql", "--db", "{db}", "--max-rows", "0", "SELECT 1"], "the row cap must be between 1 and"),
    (["sql", "--db", "{db}", "--max-rows", "many", "SELECT 1"], "Invalid value for '--max-rows'"),
    (["sql", "--db", "{db}"], "Missing argument"),
    (["sql", "--db", "postgresql://reader@[::1/shop", "SELECT 1"], "bad PostgreSQL URL"),
    (["sql", "--db", "postgresql://reader@localhost:5432/shop?sslmode=sometimes", "SELECT 1"], "sslmode"),
])
def test_bad_input_is_one_line_and_exit_2(concert_db, args, message):
    out = run(*[a.replace("{db}", str(concert_db)) for a in args])
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.llm
def test_ask_end_to_end_with_the_embedded_model(concert_db):
    out = run("ask", "--db", str(concert_db), "How many singers are there?", "--method", "baseline", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["rows"] == [[6]] and data["error"] is None
    assert data["usage"]["completion_tokens"] > 0 and data["elapsed_s"] > 0


# `askchain ask` with the model names resolved to a scripted model: the baseline's SQL by the question's words, and
# a summary for the shapes no template says.
SCRIPTED_CLI = """
import sys
import askchain.llm.registry
from askchain.llm.fake import ScriptedModel

def direct(request, i):
    question = request.values["question"]
    if "step 1" in question:
        sql = ("SELECT DISTINCT s.name FROM singer s JOIN singer_in_concert sc ON sc.singer_id = s.singer_id "
               "JOIN concert c ON c.concert_id = sc.concert_id WHERE c.stadium_id = '2' ORDER BY s.name")
    elif "held the most concerts" in question:
        sql = "SELECT stadium_id, count(*) AS concerts FROM concert GROUP BY stadium_id ORDER BY concerts DESC LIMIT 1"
    elif "country" in question:
        sql = "SELECT country, count(*) AS singers FROM singer GROUP BY country ORDER BY singers DESC"
    elif "songs" in question:
        sql = "SELECT name, song_name, age FROM singer WHERE country = 'France' ORDER BY age"
    else:
        sql = "SELECT count(*) FROM singer"
    return f"```sql\\n{sql}\\n```"

plan = '{"steps": ["Which stadium held the most concerts?", "Which singers sang at the stadium found in step 1?"]}'
script = {"direct": direct, "summarize": "Hugo Lefevre sings Lumiere, the youngest at 25.", "plan": plan}
askchain.llm.registry.get_model = lambda name=None, settings=None: ScriptedModel(script)
sys.argv = ["askchain", "ask", *sys.argv[1:]]
from askchain.cli import main
main()
"""


def ask_scripted(db, question, *args, method="baseline"):
    env = {**os.environ, "ASKCHAIN_PIPELINE__EXAMPLES_K": "0", "ASKCHAIN_PIPELINE__VALUE_RETRIEVAL": "false"}
    return subprocess.run([sys.executable, "-c", SCRIPTED_CLI, "--db", str(db), question, "--method", method, *args],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("question, answer_lines", [
    ("How many singers are there?", ["There are 6 singers."]),
    ("How many singers per country?", ["1 France — 4 singers", "2 United States — 1 singer", "3 Netherlands — 1 singer"]),
    ("Which songs do French singers sing?", ["Hugo Lefevre sings Lumiere, the youngest at 25."]),  # the model's words
])
def test_ask_prints_sql_rows_the_answer_in_words_and_timing(concert_db, question, answer_lines):
    out = ask_scripted(concert_db, question)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    assert lines[0].startswith("SELECT")
    answer_at = lines.index(answer_lines[0])
    assert lines[answer_at:answer_at + len(answer_lines)] == answer_lines
    assert any("fake:scripted · baseline" in line for line in lines[answer_at:])  # the timing line follows the words
    assert any("│" in line for line in lines[:answer_at])  # the rows' table comes before the words
    assert "**" not in out.stdout  # the Markdown is rendered, not printed raw
    # progress went to stderr, one line per finished stage when stderr is not a terminal
    progress = out.stderr.splitlines()
    assert all(line.startswith("✓ ") and line.endswith(" s") for line in progress)
    assert {"draft", "select", "answer"} <= {line.split()[1] for line in progress}


@pytest.mark.parametrize("name, magic", [("chart.png", b"\x89PNG"), ("chart.svg", b"<?xml")])
def test_ask_saves_the_chart(concert_db, tmp_path, name, magic):
    path = tmp_path / name
    out = ask_scripted(concert_db, "How many singers per country?", "--chart", str(path))
    assert out.returncode == 0, out.stderr
    assert path.read_bytes().startswith(magic)
    assert f"Chart saved to {path}" in out.stdout


def test_ask_says_when_no_chart_fits(concert_db, tmp_path):
    out = ask_scripted(concert_db, "How many singers are there?", "--chart", str(tmp_path / "chart.png"))
    assert out.returncode == 0, out.stderr
    assert "No chart" in out.stdout and not (tmp_path / "chart.png").exists()


def test_ask_json_is_only_json_on_stdout(concert_db, tmp_path):
    path = tmp_path / "chart.png"
    out = ask_scripted(concert_db, "How many singers per country?", "--json", "--chart", str(path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["rows"][0] == ["France", 4]
    assert data["answer"].splitlines()[0] == "1. **France** — 4 singers"
    assert "draft" in out.stderr and f"Chart saved to {path}" in out.stderr
    assert path.exists()


def test_ask_shows_a_planned_question_step_by_step(concert_db):
    out = ask_scripted(concert_db, "For the stadium that held the most concerts, which singers sang there?",
                       method="pipeline")
    assert out.returncode == 0, out.stderr
    assert "Plan, 2 steps:\n  1. Which stadium held the most concerts?\n  2. Which singers" in out.stderr
    assert "✓ step 1 · draft" in out.stderr and "✓ step 2 · select" in out.stderr
    lines = [line.strip() for line in out.stdout.splitlines()]
    first, second = lines.index("Step 1: Which stadium held the most concerts?"), lines.index(
        "Step 2: Which singers sang at the stadium found in step 1?")
    assert first < second and any("concerts" in line for line in lines[first:second])  # step 1's SQL and rows
    assert "Answered in steps:" in out.stdout and "Jules Marchand" in out.stdout


@pytest.mark.llm
def test_prepare_saves_the_schema_prompt_that_the_next_question_restores(tmp_path):
    """What `make install` runs: the prompt prefix of a database's questions is evaluated once, and the first
    question, in another process, restores it instead of evaluating it."""
    import sqlite3

    db = tmp_path / "wide.sqlite"
    with sqlite3.connect(db) as con:  # a schema of ~2k tokens, well over what states on disk are kept for
        for n in range(30):
            con.execute(f"CREATE TABLE shipment_{n} (id INTEGER PRIMARY KEY, origin_city TEXT, destination_city TEXT, "
                        f"weight_kg REAL, shipped_on TEXT, carrier_name TEXT)")
        con.execute("INSERT INTO shipment_0 VALUES (1, 'Oslo', 'Lima', 2.5, '2024-01-02', 'Acme')")
    env = {**os.environ, "ASKCHAIN_PATHS__CACHE_DIR": str(tmp_path / "cache"), "ASKCHAIN_LLM__CACHE": "false"}
    model = ["--model", "qwen2.5-coder-0.5b"]
    first = run("prepare", "--db", str(db), "--method", "baseline", *model, env=env)
    assert first.returncode == 0, first.stderr
    said = " ".join(first.stdout.split())  # rich wraps long lines
    evaluated = int(said.split(" tokens of the schema prompt evaluated")[0].rsplit(" ", 1)[-1])
    assert evaluated > 1500
    again = run("prepare", "--db", str(db), "--method", "baseline", *model, env=env)
    assert again.returncode == 0 and " 0 tokens of the schema prompt evaluated" in " ".join(again.stdout.split())
    asked = run("ask", "--db", str(db), "How many shipments does table shipment_0 hold?", "--method", "baseline",
                "--json", *model, env=env)
    assert asked.returncode == 0, asked.stderr
    usage = json.loads(asked.stdout)["usage"]
    assert usage["restored_tokens"] > evaluated - 30 and usage["prompt_tokens"] - usage["restored_tokens"] < 60
