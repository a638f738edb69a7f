"""SQL that sqlglot's own parser fails on with an exception of its making is one ParseError wherever askchain parses a
model's SQL: no stage, engine method or evaluation helper lets it escape (it once stopped an evaluation run)."""

from __future__ import annotations

import duckdb
import pytest
from sqlglot.errors import ParseError

from askchain.db import open_database
from askchain.db.dialects import parse_one, parse_statements, qualified_table
from askchain.db.guard import check_read_only
from askchain.db.schema import Column, Schema, Table
from askchain.errors import QueryRefused
from askchain.eval.hardness import spider_hardness
from askchain.eval.values import gold_literals
from askchain.generation.sql_text import normalize_sql
from askchain.pipeline.select import orders_rows
from askchain.pipeline.validate import validate_sql

# sqlglot raises AttributeError ('NoneType' object has no attribute 'error_messages') on these
BROKEN = ["SELECT DATE_SUB(x)", "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE())",
          "SELECT TIMESTAMP_SUB(block_timestamp) FROM transactions"]


@pytest.mark.parametrize("sql", BROKEN)
def test_every_parser_failure_is_a_parse_error(sql):
    for parse in (parse_one, parse_statements):
        with pytest.raises(ParseError, match="cannot parse this as bigquery: AttributeError"):
            parse(sql, "bigquery")


@pytest.mark.parametrize("sql", BROKEN)
def test_no_reader_of_model_sql_lets_a_parser_failure_escape(sql, tmp_path):
    assert normalize_sql(sql, "bigquery") == " ".join(sql.split()).lower()
    assert orders_rows(sql, "bigquery") is False
    assert spider_hardness(sql, "bigquery") is None
    assert gold_literals(sql, "bigquery") == set()
    schema = Schema([Table("blocks", [Column("timestamp", "TIMESTAMP")])], "bigquery")
    assert validate_sql(sql, schema).errors[0].startswith("syntax error: cannot parse this as bigquery")
    with pytest.raises(QueryRefused, match="cannot parse the SQL as bigquery"):
        check_read_only(sql, "bigquery")
    path = tmp_path / "x.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE blocks (timestamp TIMESTAMP)")
    engine = open_database(str(path), query_dialect="bigquery", table_map={"p.d.blocks": "blocks"})
    assert engine.qualified_sql(sql) == sql  # handed back as written


@pytest.mark.parametrize("dialect, name, written", [
    ("bigquery", "bigquery-public-data.crypto_ethereum.blocks", "`bigquery-public-data.crypto_ethereum.blocks`"),
    ("postgres", "public.orders", "public.orders"),
    ("duckdb", "my shop.main.orders", '"my shop".main.orders'),
])
def test_table_paths_are_written_as_each_dialects_clients_write_them(dialect, name, written):
    assert qualified_table(name, dialect) == written
