"""A figure compared with an amount is written as the question's amount it stands for, where it is written."""

from __future__ import annotations

import pytest

from askchain.db.schema import Column, Schema, Table
from askchain.rules.repairs.amounts_as_given import amounts_as_given
from askchain.pipeline.validate import validate_sql
from askchain.semantic.layer import Unit

UNITS = {
    "transactions.value": Unit(name="wei", columns=("transactions.value",), shown_as="show ETH as {column} / 1e18",
                               asked_for="wei", least_meant=1e6, scales={"ETH": 1e18, "gwei": 1e9}),
    "blocks.withdrawals.amount": Unit(name="gwei", columns=("blocks.withdrawals.amount",),
                                      shown_as="show ETH as CAST({column} AS NUMERIC) / 1e9", asked_for="gwei",
                                      least_meant=1000, scales={"ETH": 1e9, "gwei": 1}),
}
SCHEMA = Schema([
    Table("transactions", [Column("hash", "STRING"), Column("value", "NUMERIC"), Column("block_timestamp", "TIMESTAMP"),
                           Column("gas_price", "INT64")]),
    Table("blocks", [Column("number", "INT64"), Column("timestamp", "TIMESTAMP"),
                     Column("withdrawals", "ARRAY<STRUCT<index INT64, address STRING, amount STRING>>")]),
], "bigquery")
COUNT = "SELECT COUNT(*) FROM transactions WHERE "
EXITS = "SELECT COUNT(*) FROM blocks, UNNEST(withdrawals) AS w WHERE "


def findings(question: str):
    return lambda sql: validate_sql(sql, SCHEMA, units=UNITS, question=question).errors


@pytest.mark.parametrize("question, sql, expected", [
    # what the 1.5B model wrote for "how many transactions in the last 30 days moved more than 10 ETH?": powers of
    # ten off, the bare number, a cast column, the figure in ETH for a column read in ETH
    ("moved more than 10 ETH", COUNT + "value > 1000000000000000 AND DATE(block_timestamp) = CURRENT_DATE()",
     COUNT + "value > 10 * 1e18 AND DATE(block_timestamp) = CURRENT_DATE()"),
    ("moved more than 10 ETH", COUNT + "SAFE_CAST(value AS BIGNUMERIC) > 10000000000",
     COUNT + "SAFE_CAST(value AS BIGNUMERIC) > 10 * 1e18"),
    ("moved more than 10 ETH", COUNT + "value > 10", COUNT + "value > 10 * 1e18"),
    ("moved more than 10 ETH", COUNT + "value / 1e18 > 0.01", COUNT + "value / 1e18 > 10"),
    ("moved more than 10 ETH", COUNT + "value > (10 * 1e15)", COUNT + "value > (10 * 1e18)"),
    # the amount whose number the figure writes, else the closest; both ends of a range
    ("between 0.5 ETH and 20 ETH", COUNT + "value BETWEEN 0.5 AND 20", COUNT + "value BETWEEN 0.5 * 1e18 AND 20 * 1e18"),
    ("between 1 and 10 ETH", COUNT + "value BETWEEN 1 AND 10", COUNT + "value BETWEEN 1 * 1e18 AND 10 * 1e18"),
    ("in the last 7 days, more than 10 ETH", COUNT + "value > 1e15", COUNT + "value > 10 * 1e18"),  # 7: no amount
    ("more than 10 ETH at over 30 gwei", COUNT + "value > 3e9", COUNT + "value > 30 * 1e9"),
    # a struct array's field, in gwei: the question's other way of writing the amount, as the side reads it
    ("at least 32 ETH, i.e. 32,000,000,000 gwei", EXITS + "CAST(w.amount AS NUMERIC) / 1e9 >= 32000000000",
     EXITS + "CAST(w.amount AS NUMERIC) / 1e9 >= 32"),
    ("at least 32 ETH", EXITS + "CAST(w.amount AS INT64) >= 32", EXITS + "CAST(w.amount AS INT64) >= 32 * 1e9"),
    # the question's amount already, zero, no amount in the question, a figure that is more than numbers, a bound in
    # a histogram, a column in no unit: unchanged
    ("moved more than 10 ETH", COUNT + "value > 10 * 1e18", None),
    ("moved more than 10 ETH", COUNT + "value > 10 * POWER(10, 18)", None),
    ("moved more than 10 ETH", COUNT + "value > 0", None),
    ("the 10 largest transfers", COUNT + "value > 1e15", None),
    ("moved more than 10 ETH", COUNT + "value > POWER(10, 16)", None),
    ("moved more than 10 ETH", "SELECT COUNTIF(value > 1e15) FROM transactions", None),
    ("paid more than 10 ETH", COUNT + "gas_price > 10", None),
    # two figures that would become one amount: which end is which is not known
    ("between 1 and 10 ETH", COUNT + "value BETWEEN 1e15 AND 1e16", None),
    ("more than 10 ETH", COUNT + "value > 1e15 AND value < 1e17", None),
])
def test_a_figure_is_written_as_the_questions_amount(question, sql, expected):
    written, notes = amounts_as_given(sql, SCHEMA, UNITS, question, findings(question))
    assert written == (expected or sql)
    assert bool(notes) == bool(expected)
    if expected:
        assert not [e for e in findings(question)(written) if "none of the amounts" in e or "almost nothing" in e]


def test_a_rewrite_that_brings_a_new_finding_is_not_made():
    """The edit must leave the query with fewer findings and no new one, as validation judges it."""
    sql = COUNT + "value > 1e15"
    assert amounts_as_given(sql, SCHEMA, UNITS, "more than 10 ETH", lambda text: [text])[0] == sql
    assert amounts_as_given("SELECT (", SCHEMA, UNITS, "more than 10 ETH", findings("more than 10 ETH")) == (
        "SELECT (", [])
