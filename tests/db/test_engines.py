"""SQLite and DuckDB engines: introspection, read-only execution, limits, and untouched files."""

import hashlib

import duckdb
import pytest

from askchain.config import get_settings
from askchain.db import open_database
from askchain.errors import DatabaseError, QueryFailed, QueryRefused


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def duckdb_file(tmp_path):
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount DOUBLE)")
    con.execute("COMMENT ON COLUMN orders.amount IS 'order total in USD'")
    con.execute("INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')")
    con.execute("INSERT INTO orders SELECT i, 1 + i % 2, i * 1.5 FROM range(1, 101) t(i)")
    con.close()
    return path


def test_engine_inferred_from_file_header(concert_db_copy, duckdb_file):
    assert open_database(str(concert_db_copy)).dialect == "sqlite"
    assert open_database(str(duckdb_file)).dialect == "duckdb"
    assert open_database(f"sqlite://{concert_db_copy}").dialect == "sqlite"


@pytest.mark.parametrize("location", ["/no/such/file.sqlite", "ftp://host/db", __file__])
def test_unusable_locations_are_one_line_errors(location):
    with pytest.raises(DatabaseError) as info:
        open_database(location)
    assert "\n" not in str(info.value)


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(DatabaseError, match="is a directory, not a database file"):
        open_database(str(tmp_path))


def test_sqlite_introspection(concert_db_copy):
    schema = open_database(str(concert_db_copy)).schema()
    concert = schema.table("concert")
    assert [c.name for c in concert.columns][:2] == ["concert_ID", "concert_Name"]
    assert concert.primary_key == ["concert_ID"]
    assert ("concert", "Stadium_ID", "stadium", "Stadium_ID") in schema.foreign_key_edges()
    assert schema.table("singer").row_count == 6
    assert schema.table("singer").column("Country").examples
    assert "CREATE TABLE singer" in schema.ddl()
    assert "FK: concert.Stadium_ID -> stadium.Stadium_ID" in schema.light()


def test_duckdb_introspection(duckdb_file):
    schema = open_database(str(duckdb_file)).schema()
    orders = schema.table("orders")
    assert orders.column("amount").description == "order total in USD"
    assert ("orders", "customer_id", "customers", "id") in schema.foreign_key_edges()
    assert orders.row_count == 100


@pytest.mark.parametrize("fixture", ["concert_db_copy", "duckdb_file"])
def test_queries_run_and_files_stay_byte_identical(fixture, request):
    path = request.getfixturevalue(fixture)
    before = digest(path)
    engine = open_database(str(path))
    table = "singer" if fixture == "concert_db_copy" else "customers"
    result = engine.execute(f"SELECT * FROM {table}")
    assert result.rows and result.columns and not result.truncated
    for sql in (f"DELETE FROM {table}", f"WITH x AS (DELETE FROM {table} RETURNING *) SELECT * FROM x", f"DROP TABLE {table}"):
        with pytest.raises(QueryRefused):
            engine.execute(sql)
    engine.close()
    assert digest(path) == before


def test_sqlite_connection_itself_refuses_writes(concert_db_copy):
    """Second barrier: even SQL that slipped past the guard cannot write through the engine's connection."""
    engine = open_database(str(concert_db_copy))
    before = digest(concert_db_copy)
    for sql in ("DELETE FROM singer", "CREATE TABLE t(a)", "ATTACH DATABASE ':memory:' AS m"):
        with pytest.raises(QueryFailed):
            engine._run(sql, max_rows=10, timeout_s=5)
    assert digest(concert_db_copy) == before


def test_duckdb_connection_itself_refuses_writes_and_files(duckdb_file):
    engine = open_database(str(duckdb_file))
    for sql in (
        "DELETE FROM orders",
        "SELECT * FROM read_text('/etc/passwd')",
        "COPY orders TO '/tmp/askchain-leak.csv'",
        "SET enable_external_access = true",
        "INSTALL httpfs",
    ):
        with pytest.raises(QueryFailed):
            engine._run(sql, max_rows=10, timeout_s=5)


def test_row_cap_truncates(duckdb_file):
    result = open_database(str(duckdb_file), get_settings().with_overrides(db=dict(max_rows=7)).db).execute("SELECT * FROM orders")
    assert len(result.rows) == 7 and result.truncated


@pytest.mark.parametrize("fixture,runaway", [
    ("concert_db_copy", "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"),
    ("duckdb_file", "SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range * b.range = -1"),
])
def test_runaway_queries_stop_at_the_timeout(fixture, runaway, request):
    engine = open_database(str(request.getfixturevalue(fixture)), get_settings().with_overrides(db=dict(timeout_s=1)).db)
    with pytest.raises(QueryFailed, match="time limit"):
        engine.execute(runaway)


def test_runtime_errors_are_query_failures(concert_db_copy):
    with pytest.raises(QueryFailed, match="no such column"):
        open_database(str(concert_db_copy)).execute("SELECT nope FROM singer")


def test_mapped_names_are_transpiled(duckdb_file):
    engine = open_database(str(duckdb_file), query_dialect="bigquery", table_map={"shop-project.sales.orders": "orders"})
    result = engine.execute(
        "SELECT SAFE_DIVIDE(SUM(amount), COUNT(*)) AS avg_amount FROM `shop-project.sales.orders` WHERE id > 0"
    )
    assert result.rows[0][0] == pytest.approx(75.75)
    assert engine.schema().table("orders").query_name is None  # prompts show the short name, which runs here
    assert engine.execute("SELECT COUNT(*) FROM orders").rows == [(100,)]


@pytest.mark.parametrize("written, returned", [
    ("SELECT COUNT(*) FROM orders", "SELECT COUNT(*) FROM `shop-project.sales.orders`"),
    ("SELECT o.id FROM orders AS o WHERE DATE(o.day) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)",  # the rest as written
     "SELECT o.id FROM `shop-project.sales.orders` AS o WHERE DATE(o.day) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)"),
    ("SELECT orders.id FROM `orders` JOIN (SELECT id FROM orders) AS x USING (id)",
     "SELECT orders.id FROM `shop-project.sales.orders` JOIN (SELECT id FROM `shop-project.sales.orders`) AS x USING (id)"),
    ("WITH orders AS (SELECT 1 AS id) SELECT id FROM orders", "WITH orders AS (SELECT 1 AS id) SELECT id FROM orders"),
    ("SELECT COUNT(*) FROM `shop-project.sales.orders`", "SELECT COUNT(*) FROM `shop-project.sales.orders`"),
    ("SELECT COUNT(*) FROM customers", "SELECT COUNT(*) FROM customers"),  # not a mapped table
    ("SELECT FROM WHERE (", "SELECT FROM WHERE ("),  # what does not parse is handed back as written
])
def test_the_returned_sql_qualifies_short_table_names(duckdb_file, written, returned):
    engine = open_database(str(duckdb_file), query_dialect="bigquery", table_map={"shop-project.sales.orders": "orders"})
    assert engine.qualified_sql(written) == returned


@pytest.mark.parametrize("dialect, qualified, returned", [
    ("postgres", "public.orders", "SELECT COUNT(*) FROM public.orders"),  # each part on its own, not "public.orders"
    ("snowflake", "ga360.web.orders", "SELECT COUNT(*) FROM ga360.web.orders"),
    ("duckdb", "my shop.main.orders", 'SELECT COUNT(*) FROM "my shop".main.orders'),  # quoted only where needed
])
def test_each_dialect_gets_its_table_paths_as_its_clients_write_them(duckdb_file, dialect, qualified, returned):
    engine = open_database(str(duckdb_file), query_dialect=dialect, table_map={qualified: "orders"})
    assert engine.qualified_sql("SELECT COUNT(*) FROM orders") == returned


@pytest.mark.parametrize("short_names, shown", [
    (True, "SELECT id FROM orders AS o JOIN orders ON TRUE"),
    (False, "SELECT id FROM `shop-project.sales.orders` AS o JOIN shop-project.sales.orders ON TRUE"),
])
def test_examples_name_tables_as_the_schema_shows_them(duckdb_file, short_names, shown):
    limits = get_settings().with_overrides(db={"short_table_names": short_names}).db
    engine = open_database(str(duckdb_file), limits, query_dialect="bigquery", table_map={"shop-project.sales.orders": "orders"})
    assert engine.prompt_sql("SELECT id FROM `shop-project.sales.orders` AS o JOIN shop-project.sales.orders ON TRUE") == shown
    assert engine.schema().ddl().count("CREATE TABLE " + ("orders (" if short_names else "`shop-project.sales.orders` (")) == 1


def test_examples_name_a_table_by_its_local_name_where_two_share_a_last_part(duckdb_file):
    engine = open_database(str(duckdb_file), query_dialect="postgres", table_map={"hr.orders": "orders_2",
                                                                                   "sales.orders": "orders"})
    assert engine.prompt_sql("SELECT a.id FROM sales.orders AS a JOIN hr.orders AS b ON a.id = b.id") == \
        "SELECT a.id FROM orders AS a JOIN orders_2 AS b ON a.id = b.id"
