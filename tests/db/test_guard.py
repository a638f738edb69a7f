"""The read-only guard, table-driven: every write or file access refused however written; reads admitted."""

import pytest
import sqlglot
from sqlglot import exp

from askchain.db.guard import check_read_only
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


def test_refusal_reason_is_one_line():
    with pytest.raises(QueryRefused) as info:
        check_read_only("WITH a AS (DELETE FROM t RETURNING *) SELECT * FROM a", "postgres")
    assert "\n" not in str(info.value) and "DELETE" in str(info.value)
