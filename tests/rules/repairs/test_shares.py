"""A share whose WHERE keeps only the rows it counts has that condition dropped from WHERE, where it is written."""

from __future__ import annotations

import sqlite3

import pytest

from askchain.rules.repairs.shares import shares_among_all_rows

NOTE = "dropped WHERE's {}: the share counts those rows among all of them, so WHERE cannot keep only them"


@pytest.mark.parametrize("sql, dialect, expected, dropped", [
    # the share's condition last, first, alone, in parentheses; COUNTIF, CASE, IF, SAFE_DIVIDE, a percentage
    ("SELECT COUNTIF(c.is_erc721) / COUNT(*) FROM tt JOIN c ON c.address = tt.token_address "
     "WHERE DATE(tt.block_timestamp) = CURRENT_DATE() AND c.is_erc721 = TRUE", "bigquery",
     "SELECT COUNTIF(c.is_erc721) / COUNT(*) FROM tt JOIN c ON c.address = tt.token_address "
     "WHERE DATE(tt.block_timestamp) = CURRENT_DATE()", ["c.is_erc721 = TRUE"]),
    ("SELECT SUM(CASE WHEN is_erc721 THEN 1 ELSE 0 END) * 1.0 / COUNT(*) FROM contracts WHERE is_erc721 AND x > 1",
     "bigquery", "SELECT SUM(CASE WHEN is_erc721 THEN 1 ELSE 0 END) * 1.0 / COUNT(*) FROM contracts WHERE x > 1",
     ["is_erc721"]),
    ("SELECT SAFE_DIVIDE(COUNTIF(t.a IS NOT NULL AND c.ok IS TRUE), COUNT(*)) FROM t JOIN c ON c.id = t.a "
     "WHERE c.ok", "bigquery",
     "SELECT SAFE_DIVIDE(COUNTIF(t.a IS NOT NULL AND c.ok IS TRUE), COUNT(*)) FROM t JOIN c ON c.id = t.a", ["c.ok"]),
    ("SELECT 100.0 * SUM(IF(status = 1, 1, 0)) / COUNT(*) FROM traces WHERE x > 2 AND (status = 1)", "bigquery",
     "SELECT 100.0 * SUM(IF(status = 1, 1, 0)) / COUNT(*) FROM traces WHERE x > 2", ["(status = 1)"]),
    # a sum of an amount under the condition, against the sum of all
    ("SELECT SUM(CASE WHEN w.address = '0xb9' THEN w.amount ELSE 0 END) / SUM(w.amount) FROM blocks, "
     "UNNEST(withdrawals) AS w WHERE w.address = '0xb9' AND DATE(timestamp) = CURRENT_DATE()", "bigquery",
     "SELECT SUM(CASE WHEN w.address = '0xb9' THEN w.amount ELSE 0 END) / SUM(w.amount) FROM blocks, "
     "UNNEST(withdrawals) AS w WHERE DATE(timestamp) = CURRENT_DATE()", ["w.address = '0xb9'"]),
    # a condition of two parts, both in WHERE: both dropped, one at a time
    ("SELECT COUNT(CASE WHEN a = 1 AND b = 2 THEN 1 END) * 100.0 / COUNT(*) FROM t WHERE a = 1 AND c = 3 AND b = 2",
     "sqlite", "SELECT COUNT(CASE WHEN a = 1 AND b = 2 THEN 1 END) * 100.0 / COUNT(*) FROM t WHERE c = 3",
     ["a = 1", "b = 2"]),
    # a condition in parentheses of its own, inside the ANDs
    ("SELECT COUNTIF((a AND b) AND x = 1) / COUNT(*) FROM t WHERE (a AND b) AND x = 1 AND y = 2", "bigquery",
     "SELECT COUNTIF((a AND b) AND x = 1) / COUNT(*) FROM t WHERE y = 2", ["(a AND b)", "x = 1"]),
    # a share of a subset, asked for: the numerator counts by more than WHERE keeps
    ("SELECT COUNTIF(is_erc721 AND from_address = '0x0') / COUNT(*) FROM tt WHERE is_erc721", "bigquery", None, []),
    # the denominator counts under a condition of its own, or is a subquery: no share of all rows
    ("SELECT COUNTIF(a) / COUNTIF(b) FROM t WHERE a", "bigquery", None, []),
    ("SELECT COUNT(*) * 1.0 / (SELECT COUNT(*) FROM t) FROM t WHERE a = 1", "sqlite", None, []),
    # a CASE whose other branch counts too
    ("SELECT SUM(CASE WHEN a = 1 THEN 1 ELSE 2 END) / COUNT(*) FROM t WHERE a = 1", "sqlite", None, []),
    # the condition in another SELECT's WHERE, under OR, or no WHERE at all
    ("SELECT COUNTIF(a = 1) / COUNT(*) FROM (SELECT a FROM t WHERE a = 1)", "bigquery", None, []),
    ("SELECT COUNTIF(a = 1) / COUNT(*) FROM t WHERE a = 1 OR b = 2", "bigquery", None, []),
    ("SELECT COUNTIF(a = 1) / COUNT(*) FROM t", "bigquery", None, []),
    ("SELECT COUNTIF(a = 1) / COUNT(*) FROM t WHERE", "bigquery", None, []),  # unreadable
])
def test_a_shares_own_condition_leaves_where(sql, dialect, expected, dropped):
    assert shares_among_all_rows(sql, dialect) == (expected or sql, [NOTE.format(d) for d in dropped])


def test_the_share_is_counted_among_all_rows_once_dropped():
    db = sqlite3.connect(":memory:")
    db.executescript("CREATE TABLE t (kind TEXT); INSERT INTO t VALUES ('nft'), ('erc20'), ('erc20'), ('erc20');")
    sql = "SELECT COUNT(CASE WHEN kind = 'nft' THEN 1 END) * 1.0 / COUNT(*) FROM t WHERE kind = 'nft'"
    assert db.execute(sql).fetchone() == (1.0,)
    assert db.execute(shares_among_all_rows(sql, "sqlite")[0]).fetchone() == (0.25,)
