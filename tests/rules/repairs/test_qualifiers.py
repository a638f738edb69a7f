"""A qualifier naming no table of its query is written as the one table there that has the column."""

import pytest

from askchain.db.schema import Column, Schema, Table
from askchain.rules.repairs.qualifiers import known_qualifiers


def _table(name: str, *columns: str) -> Table:
    return Table(name, [Column(c, "STRING") for c in columns])


SCHEMA = Schema([_table("balances", "address", "eth_balance"),
                 _table("token_transfers", "token_address", "to_address", "value"),
                 _table("transactions", "hash", "value", "max_priority_fee_per_gas", "transaction_type"),
                 _table("traces", "transaction_hash", "value", "trace_type"),
                 _table("tokens", "address", "symbol")], "bigquery")


@pytest.mark.parametrize("sql, expected, notes", [
    # an alias never declared, beside the alias of the one table that has the column
    ("SELECT b.eth_balance FROM balances b JOIN token_transfers tt ON t.token_address = b.address",
     "SELECT b.eth_balance FROM balances b JOIN token_transfers tt ON tt.token_address = b.address",
     ["t.token_address read as tt.token_address"]),
    # a table the query does not read; every such column of the query
    ("SELECT AVG(traces.max_priority_fee_per_gas) FROM transactions WHERE traces.transaction_type = 2",
     "SELECT AVG(transactions.max_priority_fee_per_gas) FROM transactions WHERE transactions.transaction_type = 2",
     ["traces.max_priority_fee_per_gas read as transactions.max_priority_fee_per_gas",
      "traces.transaction_type read as transactions.transaction_type"]),
    # inside a CTE, whose own tables decide
    ("WITH x AS (SELECT tx.hash FROM transactions AS t) SELECT COUNT(*) FROM x",
     "WITH x AS (SELECT t.hash FROM transactions AS t) SELECT COUNT(*) FROM x", ["tx.hash read as t.hash"]),
    # no table of the query has it, two do, the qualifier names a source, an enclosing query's source (correlated)
    ("SELECT COUNT(*) FROM token_transfers WHERE tk.symbol = 'USDT'", None, []),
    ("SELECT t.value FROM transactions AS tx JOIN traces AS tr ON tr.transaction_hash = tx.hash", None, []),
    ("SELECT tx.value FROM transactions AS tx", None, []),
    ("SELECT hash FROM transactions AS t WHERE EXISTS (SELECT 1 FROM traces AS r WHERE r.transaction_hash = t.hash)",
     None, []),
    ("SELECT x.hash FROM (SELECT hash FROM transactions) AS x", None, []),
    # a CTE or subquery that selects the column is a source that has it
    ("WITH big AS (SELECT hash, value FROM transactions) SELECT b.value FROM big AS bb JOIN traces AS tr "
     "ON tr.transaction_hash = bb.hash", None, []),
    ("WITH big AS (SELECT hash, value FROM transactions) SELECT b.hash FROM big AS bb JOIN traces AS tr "
     "ON tr.transaction_hash = bb.hash", "WITH big AS (SELECT hash, value FROM transactions) SELECT bb.hash FROM big "
     "AS bb JOIN traces AS tr ON tr.transaction_hash = bb.hash", ["b.hash read as bb.hash"]),
    ("SELECT (", None, []),
])
def test_an_unknown_qualifier_is_written_as_the_table_that_has_the_column(sql, expected, notes):
    assert known_qualifiers(sql, SCHEMA) == (expected or sql, notes)
