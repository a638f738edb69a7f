"""A window the question's convention flags is written as the convention's own condition, in each WHERE bounding one
time column by the current date or time; anything else, or an edit validation finds worse, stays as written."""

from __future__ import annotations

import pytest

from askchain.db.schema import Column, Schema, Table
from askchain.rules.repairs.windows import conform_windows, time_columns
from askchain.semantic import Entry, Reading
from askchain.semantic.layer import Check, parsed_tree

LAST_N_DAYS = Entry(
    name="last_n_days", kind="convention", patterns=(r"\blast\s+(?P<n>\d+)\s+days\b",), definition="last {n} days",
    condition="DATE({column}) >= DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY) AND DATE({column}) < CURRENT_DATE()",
    checks=(Check(requires=r"INTERVAL\s+{n}\s+DAY", message="the last {n} days"),
            Check(forbids=r"(?<![<>!])=\s*DATE_SUB\s*\(\s*CURRENT_DATE\s*\(\s*\)\s*,\s*INTERVAL\s+{n}\s+DAY\s*\)",
                  message="not the one day {n} days ago"),
            Check(requires=r"<\s*CURRENT_DATE", message="the last {n} days end before today")))
YESTERDAY = Reading(Entry(name="yesterday", kind="convention", terms=("yesterday",), definition="yesterday",
                          condition="DATE({column}) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)",
                          checks=(Check(requires=r"INTERVAL\s+1\s+DAY", message="the question asks about yesterday"),)))
#: The same convention with its checks on the query's tree, as the Ethereum layer writes them.
LAST_N_DAYS_ON_THE_TREE = LAST_N_DAYS.model_copy(update={"checks": (
    Check(requires_tree={"interval": {"n": "{n}", "unit": "DAY"}}, message="the last {n} days"),
    Check(forbids_tree={"compared": {"this": {"days_ago": "{n}"}}}, message="not the one day {n} days ago"),
    Check(requires_tree={"before_today": {}}, message="the last {n} days end before today"))})
GWEI = Entry(name="gwei", kind="metric", terms=("gwei",), definition="gwei = wei / 1e9")
DAYS_7, DAYS_30 = Reading(LAST_N_DAYS, {"n": "7"}), Reading(LAST_N_DAYS, {"n": "30"})
TIMES = frozenset({"block_timestamp", "timestamp"})
RANGE_7 = "DATE({c}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE({c}) < CURRENT_DATE()"
RANGE_30 = "DATE({c}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) AND DATE({c}) < CURRENT_DATE()"


def no_findings(sql: str) -> list[str]:
    return []


@pytest.mark.parametrize("readings, sql, expected", [
    # the one day N days ago, for the last N days
    ([DAYS_30], "SELECT COUNT(*) FROM logs WHERE DATE(block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) "
                "AND address = '0xab'",
     f"SELECT COUNT(*) FROM logs WHERE {RANGE_30.format(c='block_timestamp')} AND address = '0xab'"),
    # a window open on today, on a qualified column
    ([DAYS_30], "SELECT COUNT(*) FROM token_transfers tt WHERE tt.value > 0 AND "
                "tt.block_timestamp >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 30 DAY)",
     f"SELECT COUNT(*) FROM token_transfers tt WHERE tt.value > 0 AND {RANGE_30.format(c='tt.block_timestamp')}"),
    # BETWEEN's own AND is no condition of its own
    ([DAYS_7], "SELECT COUNT(*) FROM traces WHERE status = 0 AND block_timestamp BETWEEN "
               "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND CURRENT_DATE() AND trace_address IS NULL",
     f"SELECT COUNT(*) FROM traces WHERE status = 0 AND {RANGE_7.format(c='block_timestamp')} AND trace_address IS NULL"),
    # two bounds of one column become one condition
    ([DAYS_7], "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) "
               "AND miner = '0xab' AND DATE(timestamp) <= CURRENT_DATE()",
     f"SELECT COUNT(*) FROM blocks WHERE {RANGE_7.format(c='timestamp')} AND miner = '0xab'"),
    # in a subquery; the join's own comparison of two time columns is no window
    ([DAYS_30], "SELECT COUNT(*) FROM (SELECT value FROM token_transfers WHERE DATE(block_timestamp) >= "
                "DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) AND DATE(block_timestamp) < CURRENT_DATE() GROUP BY value "
                "HAVING COUNT(*) > 1) t",
     f"SELECT COUNT(*) FROM (SELECT value FROM token_transfers WHERE {RANGE_30.format(c='block_timestamp')} GROUP BY "
     "value HAVING COUNT(*) > 1) t"),
    ([YESTERDAY, Reading(GWEI)], "SELECT AVG(gas_price) / 1e9 FROM transactions WHERE DATE(block_timestamp) = "
                                 "CURRENT_DATE() - 1",
     "SELECT AVG(gas_price) / 1e9 FROM transactions WHERE DATE(block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 "
     "DAY)"),
])
def test_a_flagged_window_is_written_as_the_convention(readings, sql, expected):
    written, notes = conform_windows(sql, "bigquery", TIMES, readings, no_findings)
    assert written == expected
    assert len(notes) == 1 and "written as" in notes[0]


@pytest.mark.parametrize("readings, sql", [
    # already the convention
    ([DAYS_7], f"SELECT COUNT(*) FROM transactions WHERE {RANGE_7.format(c='block_timestamp')}"),
    # two conventions: which one a window means is not askchain's guess
    ([YESTERDAY, DAYS_7], "SELECT COUNT(*) FROM transactions WHERE DATE(block_timestamp) >= "
                          "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"),
    # no window written: nothing to rewrite
    ([DAYS_7], "SELECT COUNT(*) FROM transactions WHERE receipt_status = 0"),
    # a top-level OR: its ANDs do not join the whole condition
    ([DAYS_7], "SELECT COUNT(*) FROM transactions WHERE DATE(block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 7 "
               "DAY) OR receipt_status = 0"),
    # two time columns bounded in one WHERE: the transfer's or the contract's?
    ([DAYS_7], "SELECT COUNT(*) FROM token_transfers tt JOIN contracts c ON c.address = tt.token_address WHERE "
               "tt.block_timestamp >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND "
               "c.block_timestamp >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"),
    # a column that holds no time
    ([DAYS_7], "SELECT COUNT(*) FROM transactions WHERE nonce >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"),
    # sqlglot cannot read it (a query it only cannot parse still gets its window: the rest goes to revision)
    ([DAYS_7], "SELECT COUNT(*) FROM transactions WHERE symbol = 'USDT AND DATE(block_timestamp) = "
               "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"),
])
def test_anything_else_stays_as_written(readings, sql):
    assert conform_windows(sql, "bigquery", TIMES, readings, no_findings) == (sql, [])


def test_a_window_the_checks_on_the_tree_flag_is_written_as_the_convention():
    days = Reading(LAST_N_DAYS_ON_THE_TREE, {"n": "7"})
    sql = "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"
    written, notes = conform_windows(sql, "bigquery", TIMES, [days], no_findings)
    assert written == f"SELECT COUNT(*) FROM blocks WHERE {RANGE_7.format(c='timestamp')}" and len(notes) == 1
    right = "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) <= DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) AND " \
            "DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"  # `<=` yesterday leaves today out too
    assert conform_windows(right, "bigquery", TIMES, [days], no_findings) == (right, [])
    # sqlglot cannot parse it: the checks on the tree cannot say, and the window is written as the convention
    broken = "SELECT SUM(CASE WHEN gas_used > 0 THEN 1 ELSE 0) FROM blocks WHERE DATE(timestamp) >= " \
             "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"  # a CASE without its END
    assert parsed_tree(broken, "bigquery") is None
    written, notes = conform_windows(broken, "bigquery", TIMES, [days], no_findings)
    assert written == "SELECT SUM(CASE WHEN gas_used > 0 THEN 1 ELSE 0) FROM blocks WHERE " \
                      f"{RANGE_7.format(c='timestamp')}" and len(notes) == 1


def test_an_edit_that_validation_finds_worse_is_not_kept():
    """A daily change over the last 7 days needs 8 days of rows: narrowed, it breaks the rule that says so."""
    sql = ("SELECT day, n - LAG(n) OVER (ORDER BY day) FROM (SELECT DATE(block_timestamp) AS day, COUNT(*) AS n "
           "FROM transactions WHERE DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 8 DAY) GROUP BY day)")

    def findings(text: str) -> list[str]:
        return ["the last 7 days"] + (["needs the day before"] if "INTERVAL 8 DAY" not in text else [])

    assert conform_windows(sql, "bigquery", TIMES, [DAYS_7], findings) == (sql, [])


def test_time_columns_are_the_schemas_dates_and_times():
    schema = Schema([Table("blocks", [Column("timestamp", "TIMESTAMP"), Column("number", "INT64")]),
                     Table("tokens", [Column("block_timestamp", "TIMESTAMP"), Column("symbol", "STRING")]),
                     Table("days", [Column("day", "DATE")])], "bigquery")
    assert time_columns(schema) == {"timestamp", "block_timestamp", "day"}
