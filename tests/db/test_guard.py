"""The read-only guard, table-driven: every write or file access refused however written; reads admitted."""

import logging

import pytest
import sqlglot
from sqlglot import exp

from askchain.db.guard import ALLOW_LISTS, check_read_only, plain_identifiers
from askchain.errors import QueryRefused

REFUSED = [
    ("sqlite", "DROP TABLE singer"),
    ("sqlite", "drop table singer"),
    ("sqlite", "DeLeTe FROM singer"),
    ("sqlite", "/* harmless */ UPDATE singer SET Age = 1"),
    ("sqlite", "INSERT INTO singer(Name) VALUES ('x')"),
    ("sqlite", "SELECT 1; DROP TABLE singer"),
    ("sqlite", "SELECT 1; SELECT 2"),
    ("sqlite", "PRAGMA writable_schema = 1"),
    ("sqlite", "ATTACH DATABASE '/tmp/x.db' AS x"),
    ("sqlite", "VACUUM"),
    ("sqlite", "VACUUM INTO '/tmp/copy.db'"),
    ("sqlite", "BEGIN"),
    ("sqlite", "CREATE TABLE t(a)"),
    ("sqlite", "CREATE TEMP VIEW v AS SELECT 1"),
    ("sqlite", "REPLACE INTO singer(Name) VALUES ('x')"),
    ("sqlite", "SELECT load_extension('/tmp/evil.so')"),
    ("sqlite", "SELECT readfile('/etc/passwd')"),
    ("postgres", "WITH gone AS (DELETE FROM singer RETURNING *) SELECT * FROM gone"),
    ("postgres", "WITH x AS (UPDATE singer SET age = 0 RETURNING 1) SELECT * FROM x"),
    ("postgres", "SELECT * INTO new_table FROM singer"),
    ("postgres", "SET statement_timeout = 0"),
    ("postgres", "COPY singer TO '/tmp/out.csv'"),
    ("postgres", "SELECT pg_read_file('/etc/passwd')"),
    ("postgres", "CALL refresh()"),
    ("postgres", "SELECT set_config('default_transaction_read_only', 'off', false)"),
    ("postgres", "SELECT nextval('ids')"),
    ("duckdb", "INSTALL httpfs"),
    ("duckdb", "LOAD httpfs"),
    ("duckdb", "SELECT * FROM read_csv_auto('/etc/passwd')"),
    ("duckdb", "SELECT * FROM read_text('/etc/passwd')"),
    ("duckdb", "SELECT * FROM read_parquet('data.parquet')"),
    ("duckdb", "SELECT * FROM 'data.csv'"),
    ("duckdb", 'SELECT * FROM "/etc/passwd"'),
    ("duckdb", "FROM 'x.parquet'"),
    ("duckdb", "SELECT * FROM glob('/*')"),
    ("duckdb", "SELECT getenv('HOME')"),
    ("duckdb", "SELECT * FROM query('DROP TABLE t')"),
    ("duckdb", "SELECT * FROM sqlite_scan('x.db', 't')"),
    ("duckdb", "COPY (SELECT 1) TO '/tmp/out.csv'"),
    ("duckdb", "EXPORT DATABASE '/tmp/dump'"),
    ("duckdb", "SET enable_external_access = true"),
    ("duckdb", "RESET lock_configuration"),
    ("duckdb", "DETACH db"),
    ("duckdb", "CHECKPOINT"),
    ("duckdb", "SELECT * FROM duckdb_settings()"),
    ("bigquery", "DELETE FROM `p.d.t` WHERE true"),
    ("bigquery", "MERGE `p.d.t` t USING `p.d.s` s ON t.a = s.a WHEN MATCHED THEN DELETE"),
    ("bigquery", "CREATE TEMP FUNCTION f() AS (1); SELECT f()"),
    ("sqlite", ""),
    ("sqlite", "   "),
    ("sqlite", "SELEC * FROM singer"),
    ("postgres", "SAVEPOINT a"),
    ("postgres", "LISTEN channel"),
    ("postgres", "CHECKPOINT"),
    ("postgres", "SELECT 1 AS x$$, pg_read_file('/etc/passwd') --$$"),  # `x$$` is one name, not a string's start
]

# PostgreSQL: an allow-list of functions, decided on the name the server resolves, and no system catalogs.
# (name the refusal must give, SQL)
POSTGRES_REFUSED = [
    ("query_to_xml", "SELECT query_to_xml('select pg_read_file(''/etc/passwd'')', true, true, '')"),
    ("query_to_xml_and_xmlschema", "SELECT query_to_xml_and_xmlschema('select 1', true, true, '')"),
    ("cursor_to_xml", "SELECT cursor_to_xml('c', 1, true, true, '')"),
    ("table_to_xml", "SELECT table_to_xml('pg_authid', true, true, '')"),
    ("xpath", "SELECT xpath('/row', query_to_xml('select 1', true, true, ''))"),
    ("pg_read_file", 'SELECT U&"pg\\005fread\\005ffile"(\'/etc/passwd\')'),
    ("pg_read_file", 'SELECT u&"pg\\+00005fread\\005Ffile"(\'/etc/passwd\')'),
    ("pg_read_file", 'SELECT U&"pg!005fread!005ffile" UESCAPE \'!\' (\'/etc/passwd\')'),
    ("PG_READ_FILE", 'SELECT "PG_READ_FILE"(\'/etc/passwd\')'),
    ("pg_read_file", "SELECT PG_READ_FILE('/etc/passwd')"),
    ("pg_read_file", "SELECT pg_catalog.pg_read_file('/etc/passwd')"),
    ("pg_read_file", 'SELECT "pg_catalog"."pg_read_file"(\'/etc/passwd\')'),
    ("pg_read_binary_file", "SELECT pg_read_binary_file('/etc/passwd')"),
    ("pg_ls_dir", "SELECT * FROM pg_ls_dir('/')"),
    ("pg_stat_file", "SELECT pg_stat_file('/etc/passwd')"),
    ("dblink", "SELECT * FROM dblink('dbname=postgres', 'select 1') AS t(a int)"),
    ("lo_import", "SELECT lo_import('/etc/passwd')"),
    ("lo_export", "SELECT lo_export(16384, '/tmp/x')"),
    ("lo_from_bytea", "SELECT lo_from_bytea(0, 'x')"),
    ("pg_create_physical_replication_slot", "SELECT pg_create_physical_replication_slot('s')"),
    ("pg_create_logical_replication_slot", "SELECT pg_create_logical_replication_slot('s', 'test_decoding')"),
    ("pg_logical_emit_message", "SELECT pg_logical_emit_message(true, 'p', 'x')"),
    ("set_config", "SELECT set_config('log_statement', 'all', false)"),
    ("current_setting", "SELECT current_setting('data_directory')"),
    ("pg_reload_conf", "SELECT pg_reload_conf()"),
    ("pg_terminate_backend", "SELECT pg_terminate_backend(1)"),
    ("pg_cancel_backend", "SELECT pg_cancel_backend(1)"),
    ("pg_advisory_lock", "SELECT pg_advisory_lock(42)"),
    ("pg_try_advisory_xact_lock", "SELECT pg_try_advisory_xact_lock(42)"),
    ("txid_current", "SELECT txid_current()"),
    ("pg_sleep", "SELECT pg_sleep(60)"),
    ("nextval", "SELECT nextval('ids')"),
    ("public.lower", "SELECT public.lower('A')"),  # a user function shadowing a built-in one
    ("pg_authid", "SELECT rolpassword FROM pg_authid"),
    ("pg_shadow", "SELECT * FROM pg_catalog.pg_shadow"),
    ("PG_CATALOG.pg_stat_activity", "SELECT query FROM PG_CATALOG.pg_stat_activity"),
    ("pg_hba_file_rules", "SELECT * FROM pg_hba_file_rules"),
    ("pg_settings", "SELECT * FROM (SELECT 1) a, pg_settings"),
    ('"pg_authid"', 'SELECT * FROM U&"pg\\005fauthid"'),
    ("information_schema.tables", "SELECT * FROM information_schema.tables"),
    ("pg_toast.pg_toast_1", "SELECT * FROM pg_toast.pg_toast_1"),
    ("pg_authid", "WITH pg_authid AS (SELECT 1) SELECT * FROM pg_authid"),  # a CTE's name does not reach every scope
]

POSTGRES_ALLOWED = [
    "SELECT b.miner, count(*), sum(t.value), avg(t.value)::numeric(10, 2), min(b.number), max(b.number) "
    "FROM blocks b JOIN transactions t ON t.block_number = b.number GROUP BY b.miner HAVING count(*) > 1",
    "SELECT date_trunc('day', timestamp), extract(year FROM timestamp), date_part('hour', timestamp), "
    "now() - interval '30 days', current_date, date(timestamp), to_char(timestamp, 'YYYY-MM'), age(timestamp) FROM blocks",
    "SELECT number, row_number() OVER w, rank() OVER w, lag(number) OVER w, sum(number) OVER (ORDER BY number "
    "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM blocks WINDOW w AS (PARTITION BY miner ORDER BY number)",
    "WITH daily AS (SELECT timestamp::date AS day, count(*) AS n FROM blocks GROUP BY 1) SELECT * FROM daily ORDER BY day",
    "SELECT lower(miner), upper(miner), substring(miner FROM 1 FOR 4), position('0' IN miner), trim(miner), "
    "length(miner), concat(miner, '!'), miner || '!', split_part(miner, 'x', 1), replace(miner, '0x', ''), "
    "left(miner, 4), lpad(miner, 50, ' '), regexp_replace(miner, '0+', '0') FROM blocks",
    "SELECT coalesce(NULL, 1), nullif(1, 2), greatest(1, 2), least(1, 2), round(1.5), abs(-1), power(2, 10), "
    "CASE WHEN 1 > 0 THEN 'a' ELSE 'b' END, cast(1 AS text), 1::text",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY value), string_agg(hash, ',' ORDER BY hash), "
    "count(*) FILTER (WHERE value > 0), array_agg(hash) FROM transactions",
    "SELECT * FROM generate_series(1, 3) g, unnest(ARRAY[1, 2]) u, jsonb_array_elements('[1]'::jsonb) e",
    "SELECT payload->>'a', payload->'b', jsonb_build_object('a', 1), cardinality(topics), topics[1] FROM logs",
    "SELECT x FROM t WHERE x = ANY(ARRAY[1, 2]) AND EXISTS (SELECT 1 FROM u) AND y IN (SELECT y FROM v)",
    "SELECT pg_catalog.lower('A'), \"lower\"('B'), U&\"lo\\0077er\"('C')",  # built-ins however spelled
]

ALLOWED = [
    ("sqlite", "SELECT * FROM singer"),
    ("sqlite", "select count(*) from singer;"),
    ("sqlite", "SELECT 'DROP TABLE singer; DELETE FROM x' AS note FROM singer"),
    ("sqlite", "SELECT name FROM singer -- then drop table singer"),
    ("sqlite", "/* update, insert, attach */ SELECT 1"),
    ("sqlite", "WITH t AS (SELECT * FROM singer) SELECT count(*) FROM t"),
    ("sqlite", "SELECT name FROM singer UNION SELECT name FROM stadium"),
    ("sqlite", "SELECT name FROM singer EXCEPT SELECT name FROM stadium"),
    ("sqlite", "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT * FROM n"),
    ("sqlite", "VALUES (1), (2)"),
    ("sqlite", "SELECT \"delete\" FROM t"),
    ("duckdb", "SELECT * FROM range(10)"),
    ("duckdb", "SELECT * FROM generate_series(1, 3)"),
    ("bigquery", "SELECT miner FROM `bigquery-public-data.crypto_ethereum.blocks` GROUP BY miner ORDER BY COUNT(*) DESC LIMIT 10"),
    ("bigquery", "SELECT x FROM `p.d.t`, UNNEST(topics) AS x"),
    ("bigquery", "SELECT a FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) = 1"),
]


@pytest.mark.parametrize("dialect,sql", REFUSED)
def test_refuses_writes_and_file_access(dialect, sql):
    with pytest.raises(QueryRefused):
        check_read_only(sql, dialect)


@pytest.mark.parametrize("dialect,sql", ALLOWED)
def test_admits_read_only_queries(dialect, sql):
    """Admitted without QueryRefused, and handed back as the one query parsed, which the executor then runs."""
    tree = check_read_only(sql, dialect)
    assert isinstance(tree, (exp.Query, exp.Values))
    assert tree == sqlglot.parse_one(sql, read=dialect)


@pytest.mark.parametrize("name,sql", POSTGRES_REFUSED)
def test_postgres_refuses_functions_off_the_list_and_system_catalogs_by_name(name, sql):
    with pytest.raises(QueryRefused) as refused:
        check_read_only(sql, "postgres")
    assert name in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("sql", POSTGRES_ALLOWED)
def test_postgres_admits_ordinary_analytics(sql):
    check_read_only(sql, "postgres")


def test_allow_list_names_are_plain_lower_case_names():
    """As PostgreSQL folds them: a list entry YAML read as a boolean or written in capitals would never match."""
    names = ALLOW_LISTS["postgres"].functions
    assert names and all(isinstance(n, str) and n == n.lower() and n.replace("_", "").isalnum() for n in names)


@pytest.mark.parametrize("sql,plain", [
    ('SELECT U&"d\\0061t\\+000061" FROM t', 'SELECT "data" FROM t'),
    ('SELECT u&"a""b\\\\" FROM t', 'SELECT "a""b\\" FROM t'),
    ('SELECT U&"d!0061ta" UESCAPE \'!\' FROM t', 'SELECT "data" FROM t'),
    ('SELECT U&"\\D83D\\DE00" FROM t', 'SELECT "\U0001F600" FROM t'),  # a surrogate pair is one character
    ("SELECT 'U&\"x\"' FROM t", "SELECT 'U&\"x\"' FROM t"),  # in a string: text, not a name
    ('SELECT U & "x"(1)', 'SELECT U & "x"(1)'),  # with spaces: a bitwise AND, as PostgreSQL reads it
])
def test_unicode_escaped_names_are_spelled_out(sql, plain):
    assert plain_identifiers(sql, "postgres") == plain
    assert plain_identifiers(sql, "duckdb") == sql


@pytest.mark.parametrize("sql", ['SELECT U&"\\00zz"(1)', 'SELECT U&"\\D83D" FROM t', 'SELECT U&"a" UESCAPE \'+\' FROM t'])
def test_malformed_unicode_escapes_are_refused(sql):
    with pytest.raises(QueryRefused, match="UESCAPE|unicode escape"):
        check_read_only(sql, "postgres")


@pytest.mark.parametrize("dialect,sql,kind", [
    ("postgres", "SAVEPOINT a", "not SAVEPOINT statements"),
    ("postgres", "RELEASE SAVEPOINT a", "not RELEASE statements|cannot parse"),
    ("postgres", "CHECKPOINT", "not CHECKPOINT statements"),
    ("postgres", "LISTEN jobs", "not LISTEN statements"),
    ("postgres", "/* first */ VACUUM", "not VACUUM statements"),
    ("postgres", "EXPLAIN ANALYZE SELECT 1", "not EXPLAIN statements"),
    ("sqlite", "CREATE TEMP VIEW v AS SELECT 1", "not CREATE VIEW statements"),
    ("sqlite", "drop table singer", "not DROP TABLE statements"),
    ("sqlite", "BEGIN", "not BEGIN statements"),
    ("postgres", "WITH x AS (SELECT 1) DELETE FROM t", "not DELETE statements"),
    ("postgres", "SELECT * INTO copy FROM t", "found SELECT ... INTO"),
    ("duckdb", "TRUNCATE t", "not TRUNCATE statements"),
])
def test_refusals_name_the_statement_as_written(dialect, sql, kind):
    """Where a sqlglot 30.x release cannot parse a statement, the refusal says so; a later one names it."""
    with pytest.raises(QueryRefused, match=kind.replace("(", r"\(").replace(".", r"\.")):
        check_read_only(sql, dialect)


def test_sqlglot_warnings_never_reach_the_user(caplog, capsys):
    """sqlglot logs a warning when it falls back to reading a statement as a command: the refusal is the message."""
    with caplog.at_level(logging.DEBUG):
        for sql in ("EXPLAIN ANALYZE SELECT 1", "SHOW ALL", "DECLARE c CURSOR FOR SELECT 1", "LOCK TABLE t"):
            with pytest.raises(QueryRefused):
                check_read_only(sql, "postgres")
        assert not [r for r in caplog.records if r.name.startswith("sqlglot")]
        logging.getLogger("sqlglot").warning("outside a parse")  # the silence is scoped to parsing
        assert [r.message for r in caplog.records] == ["outside a parse"]
    assert capsys.readouterr().err == ""


def test_refusal_reason_is_one_line():
    with pytest.raises(QueryRefused) as info:
        check_read_only("WITH a AS (DELETE FROM t RETURNING *) SELECT * FROM a", "postgres")
    assert "\n" not in str(info.value) and "DELETE" in str(info.value)
