"""Shorthands are expanded where the model writes them, with parentheses only where a neighbour binds tighter than
AND, and prompts show the conditions they stand for in the short form."""

import json

import pytest

from askchain.db.dialects import parse_one
from askchain.domain import get_domain
from askchain.domains.ethereum.domain import EthereumDomain
from askchain.rules.repairs.shorthands import expand_shorthands, write_short
from askchain.semantic import Shorthand

LAST_DAYS = Shorthand(call="LAST_DAYS({column}, {n})", note="",
                      sql="DATE({column}) >= DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY) AND DATE({column}) < CURRENT_DATE()")
DAY_AGO = Shorthand(call="DAY_AGO({column}, {n})", note="", sql="DATE({column}) = DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY)")
SHORTHANDS = (LAST_DAYS, DAY_AGO)
WEEK = "DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()"
YESTERDAY = "DATE(timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)"


@pytest.mark.parametrize("written, expanded, notes", [
    (f"SELECT COUNT(*) FROM t WHERE LAST_DAYS(block_timestamp, 7) GROUP BY 1",
     f"SELECT COUNT(*) FROM t WHERE {WEEK} GROUP BY 1", ["LAST_DAYS(block_timestamp, 7) expanded"]),
    # any case and spacing; a qualified column
    ("SELECT 1 FROM transactions AS tx WHERE x = 1 AND last_days( tx.block_timestamp ,30 )",
     "SELECT 1 FROM transactions AS tx WHERE x = 1 AND DATE(tx.block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 "
     "DAY) AND DATE(tx.block_timestamp) < CURRENT_DATE()", ["last_days( tx.block_timestamp ,30 ) expanded"]),
    # inside a call, beside OR (AND binds tighter), in a CASE: no parentheses needed
    ("SELECT COUNTIF(DAY_AGO(timestamp, 1)) FROM blocks", f"SELECT COUNTIF({YESTERDAY}) FROM blocks",
     ["DAY_AGO(timestamp, 1) expanded"]),
    ("SELECT 1 FROM t WHERE a OR LAST_DAYS(block_timestamp, 7) OR b", f"SELECT 1 FROM t WHERE a OR {WEEK} OR b",
     ["LAST_DAYS(block_timestamp, 7) expanded"]),
    ("SELECT CASE WHEN DAY_AGO(timestamp, 1) THEN 1 END FROM blocks",
     f"SELECT CASE WHEN {YESTERDAY} THEN 1 END FROM blocks", ["DAY_AGO(timestamp, 1) expanded"]),
    # NOT, or a comparison after it, binds tighter than AND: parenthesized
    ("SELECT 1 FROM t WHERE NOT LAST_DAYS(block_timestamp, 7)", f"SELECT 1 FROM t WHERE NOT ({WEEK})",
     ["LAST_DAYS(block_timestamp, 7) expanded"]),
    ("SELECT 1 FROM t WHERE LAST_DAYS(block_timestamp, 7) = FALSE", f"SELECT 1 FROM t WHERE ({WEEK}) = FALSE",
     ["LAST_DAYS(block_timestamp, 7) expanded"]),
    # two calls in one query
    ("SELECT COUNTIF(DAY_AGO(timestamp, 1)), COUNTIF(DAY_AGO(timestamp, 8)) FROM blocks WHERE LAST_DAYS(timestamp, 8)",
     f"SELECT COUNTIF({YESTERDAY}), COUNTIF({YESTERDAY.replace('1 DAY', '8 DAY')}) FROM blocks WHERE "
     f"{WEEK.replace('block_timestamp', 'timestamp').replace('7 DAY', '8 DAY')}",
     ["DAY_AGO(timestamp, 1) expanded", "DAY_AGO(timestamp, 8) expanded", "LAST_DAYS(timestamp, 8) expanded"]),
])
def test_a_shorthand_call_is_expanded_where_it_is_written(written, expanded, notes):
    assert expand_shorthands(written, "bigquery", SHORTHANDS) == (expanded, notes)
    assert parse_one(expanded, "bigquery") is not None


@pytest.mark.parametrize("written, expanded, note", [
    ("SELECT COUNT(*) FROM blocks WHERE timestamp >= DAY_AGO(timestamp, 1)",
     f"SELECT COUNT(*) FROM blocks WHERE {YESTERDAY}",
     "timestamp >= DAY_AGO(timestamp, 1) read as the condition on timestamp"),
    # the compared column wins over the call's argument, which may not be a column at all
    ("SELECT 1 FROM t WHERE x = 1 AND t.block_timestamp > LAST_DAYS(CURRENT_DATE(), 7) GROUP BY 1",
     f"SELECT 1 FROM t WHERE x = 1 AND {WEEK.replace('block_timestamp', 't.block_timestamp')} GROUP BY 1",
     "t.block_timestamp > LAST_DAYS(CURRENT_DATE(), 7) read as the condition on t.block_timestamp"),
    ("SELECT 1 FROM blocks WHERE DATE(timestamp) = DAY_AGO(block_timestamp, 1)",
     f"SELECT 1 FROM blocks WHERE {YESTERDAY}",
     "DATE(timestamp) = DAY_AGO(block_timestamp, 1) read as the condition on timestamp"),
    # NOT before the comparison binds tighter than AND
    ("SELECT 1 FROM t WHERE NOT block_timestamp >= LAST_DAYS(block_timestamp, 7)",
     f"SELECT 1 FROM t WHERE NOT ({WEEK})",
     "block_timestamp >= LAST_DAYS(block_timestamp, 7) read as the condition on block_timestamp"),
])
def test_a_call_compared_with_a_column_is_the_condition_on_that_column(written, expanded, note):
    """The model took the call for a date; as written it compares a timestamp with a boolean and cannot run."""
    assert expand_shorthands(written, "bigquery", SHORTHANDS) == (expanded, [note])
    assert parse_one(expanded, "bigquery") is not None


@pytest.mark.parametrize("written, expanded, note", [
    ("SELECT COUNT(*) FROM t WHERE LAST_DAYS(block_timestamp, 7) IS NOT NULL",
     f"SELECT COUNT(*) FROM t WHERE {WEEK}", "LAST_DAYS(block_timestamp, 7) IS NOT NULL read as the condition itself"),
    ("SELECT 1 FROM t WHERE x = 1 AND LAST_DAYS(block_timestamp, 7) is true GROUP BY 1",
     f"SELECT 1 FROM t WHERE x = 1 AND {WEEK} GROUP BY 1",
     "LAST_DAYS(block_timestamp, 7) is true read as the condition itself"),
    ("SELECT COUNTIF(DAY_AGO(timestamp, 1) = TRUE) FROM blocks", f"SELECT COUNTIF({YESTERDAY}) FROM blocks",
     "DAY_AGO(timestamp, 1) = TRUE read as the condition itself"),
    # NOT before it binds tighter than AND
    ("SELECT 1 FROM t WHERE NOT LAST_DAYS(block_timestamp, 7) IS NOT NULL", f"SELECT 1 FROM t WHERE NOT ({WEEK})",
     "LAST_DAYS(block_timestamp, 7) IS NOT NULL read as the condition itself"),
])
def test_a_call_tested_for_a_value_is_the_condition_itself(written, expanded, note):
    """The model took the call for a value that may be missing; on the condition in full the test holds for every
    row (`(... AND ...) IS NOT NULL`), and the window would keep everything."""
    assert expand_shorthands(written, "bigquery", SHORTHANDS) == (expanded, [note])
    assert parse_one(expanded, "bigquery") is not None


@pytest.mark.parametrize("written, expanded, note", [
    # what the 1.5B model wrote for "how many log events did the USDT contract emit yesterday"
    ("SELECT COUNT(*) FROM logs WHERE symbol = 'USDT' AND DAY_AGO(block_timestamp, 1) = CURRENT_DATE() GROUP BY 1",
     f"SELECT COUNT(*) FROM logs WHERE symbol = 'USDT' AND {YESTERDAY.replace('timestamp', 'block_timestamp')} GROUP BY 1",
     "DAY_AGO(block_timestamp, 1) = CURRENT_DATE() read as the condition itself"),
    ("SELECT 1 FROM t WHERE LAST_DAYS(block_timestamp, 7) <= CURRENT_DATE() GROUP BY day",
     f"SELECT 1 FROM t WHERE {WEEK} GROUP BY day", "LAST_DAYS(block_timestamp, 7) <= CURRENT_DATE() read as the condition itself"),
    # the date's own parentheses and arithmetic belong to it; what follows an AND or a comma does not
    ("SELECT 1 FROM t WHERE DAY_AGO(block_timestamp, 1) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) AND x = 2",
     f"SELECT 1 FROM t WHERE {YESTERDAY.replace('timestamp', 'block_timestamp')} AND x = 2",
     "DAY_AGO(block_timestamp, 1) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) read as the condition itself"),
    ("SELECT COUNTIF(DAY_AGO(timestamp, 1) = DATE(timestamp) - INTERVAL 1 DAY), 2 FROM blocks",
     f"SELECT COUNTIF({YESTERDAY}), 2 FROM blocks",
     "DAY_AGO(timestamp, 1) = DATE(timestamp) - INTERVAL 1 DAY read as the condition itself"),
    # nor a clause, a join or a CASE branch after it
    ("SELECT 1 FROM t JOIN b ON b.n = t.n AND DAY_AGO(timestamp, 1) = CURRENT_DATE() WHERE t.s = 1",
     f"SELECT 1 FROM t JOIN b ON b.n = t.n AND {YESTERDAY} WHERE t.s = 1",
     "DAY_AGO(timestamp, 1) = CURRENT_DATE() read as the condition itself"),
    ("SELECT CASE WHEN DAY_AGO(timestamp, 1) = CURRENT_DATE() THEN 1 ELSE 0 END FROM blocks",
     f"SELECT CASE WHEN {YESTERDAY} THEN 1 ELSE 0 END FROM blocks",
     "DAY_AGO(timestamp, 1) = CURRENT_DATE() read as the condition itself"),
    ("SELECT COUNT(*) FROM blocks AS b LEFT JOIN t ON DAY_AGO(timestamp, 1) = CURRENT_DATE() LEFT JOIN u ON 1 = 1",
     f"SELECT COUNT(*) FROM blocks AS b LEFT JOIN t ON {YESTERDAY} LEFT JOIN u ON 1 = 1",
     "DAY_AGO(timestamp, 1) = CURRENT_DATE() read as the condition itself"),
])
def test_a_call_compared_with_a_date_is_the_condition_itself(written, expanded, note):
    """The model took the call for a date; a condition compared with a date cannot run."""
    assert expand_shorthands(written, "bigquery", SHORTHANDS) == (expanded, [note])
    assert parse_one(expanded, "bigquery") is not None


def test_a_call_compared_with_something_else_is_expanded_as_written():
    sql = "SELECT 1 FROM t WHERE DATE_TRUNC(DATE(block_timestamp), WEEK) = LAST_DAYS(block_timestamp, 7)"
    assert expand_shorthands(sql, "bigquery", SHORTHANDS) == (
        f"SELECT 1 FROM t WHERE DATE_TRUNC(DATE(block_timestamp), WEEK) = ({WEEK})",
        ["LAST_DAYS(block_timestamp, 7) expanded"])


@pytest.mark.parametrize("sql", [
    "SELECT 'LAST_DAYS(block_timestamp, 7)' AS s FROM t",  # in a string
    "SELECT 1 FROM t WHERE LAST_DAYS(block_timestamp)",  # other arguments: its execution error goes to revision
    "SELECT 1 FROM t WHERE block_timestamp >= LAST_DAYS(block_timestamp)",
    "SELECT 1 FROM t WHERE LAST_DAYS(block_timestamp, 7",  # not closed
    "SELECT 1 FROM t WHERE LAST_DAYS(DATE(block_timestamp), 7)",
    "SELECT last_days FROM t",  # a column of that name
    f"SELECT 1 FROM t WHERE {WEEK}",
    "SELEC LAST_DAYS(",  # unreadable
])
def test_what_is_no_shorthand_call_is_left_as_written(sql):
    assert expand_shorthands(sql, "bigquery", SHORTHANDS) == (sql, [])


def test_prompts_show_the_conditions_in_the_short_form():
    notes = ('"last N days" = `DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL N DAY) AND '
             'DATE(block_timestamp) < CURRENT_DATE()`')
    assert write_short(notes, SHORTHANDS) == '"last N days" = `LAST_DAYS(block_timestamp, N)`'
    assert write_short(f"SELECT 1 FROM t WHERE {WEEK} AND {YESTERDAY}", SHORTHANDS) == (
        "SELECT 1 FROM t WHERE LAST_DAYS(block_timestamp, 7) AND DAY_AGO(timestamp, 1)")
    # the same column on both bounds only; another window stays whole
    mixed = "DATE(a) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(b) < CURRENT_DATE()"
    hours = "block_timestamp >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 24 HOUR)"
    assert write_short(mixed, SHORTHANDS) == mixed and write_short(hours, SHORTHANDS) == hours
    assert write_short("TO_DATE(x) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)", SHORTHANDS).startswith("TO_DATE(x)")
    # beside NOT or a comparison the full text is not one condition: its call would expand to another query
    for beside in (f"SELECT 1 FROM t WHERE NOT {WEEK}", f"SELECT {YESTERDAY} = TRUE FROM blocks",
                   f"SELECT x = {YESTERDAY} FROM blocks"):
        assert write_short(beside, SHORTHANDS) == beside


def test_every_gold_query_of_the_bank_comes_back_whole_from_its_short_form():
    """What the model copies from the examples expands to the bank's own SQL, for every gold query."""
    shorthands = get_domain("ethereum").semantic_layer().shorthands
    bank = [json.loads(line) for line in EthereumDomain.eval_file.read_text().splitlines() if line.strip()]
    shortened = 0
    for pair in bank:
        short = write_short(pair["gold_sql"], shorthands)
        shortened += short != pair["gold_sql"]
        assert expand_shorthands(short, "bigquery", shorthands)[0] == pair["gold_sql"], pair["id"]
    assert shortened >= 300  # most of the bank's questions ask about a window
