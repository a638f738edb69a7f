"""Bad input anywhere gets a reason, never a traceback: generated command lines for `askchain sql` and `askchain ask`
(through the real entry point, with a scripted model), and generated JSON for the HTTP API's request bodies.

A command ends with exit code 0, 1 (the SQL failed, or a bug reported on one line) or 2 (refused, on one line);
the API answers below 500. The examples are derived from the test's name (derandomized), so CI sees the same ones.
"""

from __future__ import annotations

import json
import sys
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askchain.config import Settings
from askchain.llm.fake import ScriptedModel

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SCRIPT = {
    "direct": "```sql\nSELECT country, count(*) AS singers FROM singer GROUP BY country ORDER BY singers DESC\n```",
    "summarize": "France has the most singers, 4.",
    "rewrite": "How many singers are there per country?",
}
#: What `--db` may name here, the fixture database most often: nothing that reaches the network (a URL's host would
#: be looked up).
DB_CHOICES = ["{db}"] * 6 + ["{tmp}/missing.sqlite", "{tmp}", "{tmp}/not-a-database.txt", "sqlite:///{tmp}/gone.db",
                             "postgresql://reader@[::1/shop", "mysql://reader@localhost/shop", ""]

# Text as a command line can carry it: any character but NUL, with the lone surrogates Python reads invalid bytes as.
ARGV_TEXT = st.text(st.one_of(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
                              st.sampled_from(["\udcff", "\udce9", "\udc80"])), max_size=30)
STATEMENTS = st.sampled_from([
    "SELECT 1", "SELECT * FROM singer", "SELECT Name FROM singer ORDER BY Age", "DROP TABLE singer",
    "SELECT [/bold] FROM singer", "SELECT '[/x]' AS \"[/y]\"", "SELECT '\n'", "PRAGMA writable_schema = 1",
    "ATTACH DATABASE 'x' AS y", "SELECT load_extension('x')", "SELECT 1; SELECT 2", "SELECT x'ff'", ";", "--", "   ",
    "", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
])
QUESTIONS = st.sampled_from(["How many singers are there per country?", "Which singers are French?", "   ", ""])


def words(common):
    """Common values, random text, and the two run together."""
    return st.one_of(common, ARGV_TEXT, st.tuples(common, ARGV_TEXT).map("".join))


def options(db: str, tmp: str) -> dict[str, st.SearchStrategy]:
    """Each option of `sql` and `ask` with good and bad values."""
    fill = lambda text: text.format(db=db, tmp=tmp)  # noqa: E731
    return {
        "--db": st.tuples(st.just("--db"), st.one_of(st.sampled_from(DB_CHOICES).map(fill), ARGV_TEXT.map(lambda t: f"{tmp}/{t}"))),
        "--max-rows": st.tuples(st.just("--max-rows"), st.one_of(
            st.integers(-3, 20).map(str), st.integers(-(10**12), 10**12).map(str), ARGV_TEXT)),
        "--json": st.just(("--json",)),
        "--method": st.tuples(st.sampled_from(["--method", "-m"]), words(st.sampled_from(["baseline", "self-consistency"]))),
        "--model": st.tuples(st.just("--model"), ARGV_TEXT),
        "--hint": st.tuples(st.just("--hint"), ARGV_TEXT),
        "--chart": st.tuples(st.just("--chart"), st.sampled_from(["{tmp}/c.png", "{tmp}/c.svg", "c.jpg", "{tmp}/c"]).map(fill)),
    }


def command_lines(db: str, tmp: str):
    """Mostly one command's own options and one argument, sometimes anything at all (unknown flags, extra words)."""
    known = options(db, tmp)

    def line(command: str, argument, names: list[str]):
        database = st.sampled_from(DB_CHOICES).map(lambda choice: ("--db", choice.format(db=db, tmp=tmp)))
        chosen = st.lists(st.one_of(*(known[name] for name in names)), max_size=3)
        return st.tuples(database, chosen, st.booleans(), argument).map(
            lambda t: [command, *t[0], *(a for option in t[1] for a in option), *(["--"] if t[2] else []), t[3]])

    noise = st.one_of(*known.values(), words(STATEMENTS | QUESTIONS).map(lambda word: (word,)),
                      st.sampled_from([("--",), ("--nope",), ("-m",), ("--db",), ("--max-rows",)]))
    return st.one_of(
        line("sql", words(STATEMENTS), ["--max-rows", "--json"]),
        line("ask", words(QUESTIONS), ["--method", "--model", "--hint", "--json", "--chart"]),
        st.tuples(st.sampled_from(["sql", "ask"]), st.lists(noise, max_size=5)).map(
            lambda c: [c[0], *(a for part in c[1] for a in part)]),
    )


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """`askchain ARGS` through `main()`, its streams captured as a terminal-less process has them."""
    from typer.testing import CliRunner

    from askchain.cli import main

    with CliRunner().isolation() as (out, err, _), mock.patch.object(sys, "argv", ["askchain", *args]):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        sys.stdout.flush(), sys.stderr.flush()
        return code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")


def test_command_lines(concert_db, tmp_path, monkeypatch):
    (tmp_path / "not-a-database.txt").write_text("just words\n")
    monkeypatch.chdir(tmp_path)  # a chart named without a folder lands here
    for name, value in {"EXAMPLES_K": "0", "VALUE_RETRIEVAL": "false", "METHOD": "baseline"}.items():
        monkeypatch.setenv(f"ASKCHAIN_PIPELINE__{name}", value)
    monkeypatch.setenv("ASKCHAIN_DB__DEFAULT_DOMAIN", "")  # no --db: refused, not the Ethereum dataset built
    monkeypatch.setenv("ASKCHAIN_LLM__CACHE", "false")
    monkeypatch.setattr("askchain.llm.registry.get_model", lambda name=None, settings=None: ScriptedModel(SCRIPT))

    @settings(FUZZ, max_examples=100)  # a command's run costs more than a request's
    @given(command_lines(str(concert_db), str(tmp_path)))
    def check(args):
        from askchain.config import get_settings

        get_settings.cache_clear()
        code, out, err = run_cli(args)
        assert code in (0, 1, 2), (code, err)
        assert "Traceback" not in out + err
        assert "internal error" not in err, err  # a bug, even on one line
        if code == 2 and "--help" not in args:
            errors = [line for line in err.splitlines() if line.startswith("error: ")]
            assert len(errors) == 1 and err.rstrip().endswith(errors[0]), err

    check()


# ---- the HTTP API ----------------------------------------------------------------------------------------------
JSON_TEXT = st.text(st.characters(), max_size=30)  # JSON may escape any code point, lone surrogates too
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)
JSON_QUESTIONS = st.one_of(st.sampled_from(["How many singers are there per country?", "How many singers?"]), JSON_TEXT)


def mostly(values):
    """Values of the field's own kind nine times in ten, anything JSON holds the tenth."""
    return st.sampled_from([values] * 9 + [JSON_VALUES]).flatmap(lambda chosen: chosen)


def bodies(fields: dict, optional: dict):
    """Objects with the request's fields (good, bad and odd values) nine times in ten, else any JSON at all."""
    return mostly(st.fixed_dictionaries({name: mostly(values) for name, values in fields.items()},
                                        optional={name: mostly(values) for name, values in optional.items()}))


QUERY_BODIES = bodies({"question": JSON_QUESTIONS}, {
    "db": st.sampled_from(["concert_singer", "no_such_db", "../etc", ""]),
    "thread_id": st.sampled_from(["t-1", "t-2", "../../etc", "x" * 65]),
    "method": st.sampled_from(["baseline", "self-consistency", "magic"]),
    "model": st.one_of(st.sampled_from(["fake:scripted", "/tmp/weights.gguf", "gpt-99"]), JSON_TEXT),
    "surprise": JSON_VALUES,
})
COLUMN_TYPES = st.sampled_from(["INTEGER", "TEXT", "numeric(38, 0)", "STRUCT<a INT64>", "VARCHAR(", "x" * 200])
NAMES = st.one_of(st.sampled_from(["id", "name", "country", "orders", "select", "a b", "x.y", "`q`"]), JSON_TEXT)
COLUMNS = st.lists(st.one_of(NAMES, st.fixed_dictionaries({"name": NAMES}, optional={"type": mostly(COLUMN_TYPES)})),
                   min_size=1, max_size=4)
SCHEMAS = st.fixed_dictionaries(
    {"tables": st.dictionaries(NAMES, st.fixed_dictionaries({"columns": mostly(COLUMNS)}), min_size=1, max_size=3)},
    optional={"dialect": st.sampled_from(["sqlite", "duckdb", "bigquery", "postgresql", "klingon"]),
              "database": st.sampled_from(["concert_singer", "elsewhere"])})
A2A_BODIES = bodies({"question": JSON_QUESTIONS, "schema": SCHEMAS}, {
    "task_id": st.one_of(JSON_TEXT, st.integers()), "dialect": st.sampled_from(["sqlite", "bigquery", "??"])})


@pytest.fixture
def client(tmp_path, concert_db):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from askchain.server.app import create_app

    configured = Settings().with_overrides(
        paths={"data_dir": str(tmp_path / "data"), "cache_dir": str(tmp_path / "cache")},
        llm={"cache": False},
        pipeline={"method": "baseline", "examples_k": 0, "value_retrieval": False},
        server={"databases": {"concert_singer": str(concert_db)}, "default_db": "concert_singer"},
    )
    with TestClient(create_app(configured, ScriptedModel(SCRIPT)), base_url="http://localhost") as client:
        yield client


@pytest.mark.parametrize("path, bodies", [("/query", QUERY_BODIES), ("/a2a/generate", A2A_BODIES)])
def test_request_bodies(client, path, bodies):
    @FUZZ
    @given(bodies)
    def check(body):
        response = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
        assert response.status_code < 500, response.text
        assert "Traceback" not in response.text and "internal error" not in response.text, response.text
        if response.status_code >= 400:
            assert isinstance(response.json()["detail"], (str, list))

    check()
