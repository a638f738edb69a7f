"""Column aliases renamed on the parsed tree: only a column its table lacks, resolved to one table of its scope."""

import pytest

from askchain.db.schema import Column, Schema, Table
from askchain.rules.repairs.column_aliases import own_column_names


def _table(name: str, *columns: str) -> Table:
    return Table(name, [Column(c, "STRING") for c in columns])


SCHEMA = Schema([_table("blocks", "timestamp", "number", "hash"),
                 _table("transactions", "hash", "block_timestamp", "block_number", "value")], "bigquery")
ALIASES = {"blocks": {"block_timestamp": "timestamp", "block_number": "number"},
           "transactions": {"timestamp": "block_timestamp"}}


@pytest.mark.parametrize("sql, renamed_sql, notes", [
    ("SELECT COUNT(*) FROM blocks WHERE DATE(block_timestamp) = CURRENT_DATE()",
     "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = CURRENT_DATE()", ["blocks.block_timestamp read as blocks.timestamp"]),
    # qualified by an alias, beside a table that has the column
    ("SELECT b.number FROM blocks AS b JOIN transactions AS t ON t.block_number = b.number "
     "WHERE DATE(b.block_timestamp) = CURRENT_DATE()",
     "SELECT b.number FROM blocks AS b JOIN transactions AS t ON t.block_number = b.number "
     "WHERE DATE(b.timestamp) = CURRENT_DATE()", ["blocks.block_timestamp read as blocks.timestamp"]),
    # a projection keeps its output name, so what reads the subquery's column still finds it
    ("WITH x AS (SELECT b.block_timestamp, number FROM blocks AS b) SELECT block_timestamp FROM x",
     "WITH x AS (SELECT b.timestamp AS block_timestamp, number FROM blocks AS b) SELECT block_timestamp FROM x",
     ["blocks.block_timestamp read as blocks.timestamp"]),
    ("SELECT EXTRACT(HOUR FROM timestamp) AS h FROM transactions GROUP BY h",
     "SELECT EXTRACT(HOUR FROM block_timestamp) AS h FROM transactions GROUP BY h",
     ["transactions.timestamp read as transactions.block_timestamp"]),
    ("SELECT `block_timestamp` FROM blocks", "SELECT `timestamp` AS `block_timestamp` FROM blocks",
     ["blocks.block_timestamp read as blocks.timestamp"]),  # quoted as written, in the dialect's quotes
    ("SELECT DATE(block_timestamp) AS day, COUNT(*) FROM blocks GROUP BY day ORDER BY day",
     "SELECT DATE(timestamp) AS day, COUNT(*) FROM blocks GROUP BY day ORDER BY day",
     ["blocks.block_timestamp read as blocks.timestamp"]),
])
def test_an_alias_is_renamed_to_its_tables_own_column(sql, renamed_sql, notes):
    assert own_column_names(sql, SCHEMA, ALIASES) == (renamed_sql, notes)


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = CURRENT_DATE()",  # nothing to rename
    # unqualified and a real column of another table in scope: that table's
    "SELECT COUNT(*) FROM blocks AS b JOIN transactions AS t ON t.block_number = b.number WHERE DATE(block_timestamp) = CURRENT_DATE()",
    "SELECT DATE(timestamp) AS block_timestamp FROM blocks ORDER BY block_timestamp",  # the query's own output
    "SELECT * FROM (SELECT 1 AS block_timestamp) AS s, blocks WHERE block_timestamp > 0",  # a subquery may hold it
    "SELECT gas FROM blocks",  # no alias: validation reports it
    "SELECT x.block_timestamp FROM x",  # not a schema table
    "SELEC block_timestamp FROM blocks",  # unreadable: validation reports it
])
def test_what_is_no_alias_is_left_as_written(sql):
    assert own_column_names(sql, SCHEMA, ALIASES) == (sql, [])


def test_without_aliases_nothing_is_parsed():
    assert own_column_names("SELEC", SCHEMA, {}) == ("SELEC", [])
