"""A LIMIT of more than one row that the question never asks for is dropped from the outermost query."""

from __future__ import annotations

import pytest

from askchain.rules.repairs.unasked_limit import drop_unasked_limit

LIST = "SELECT symbol, COUNT(*) AS n FROM tokens GROUP BY symbol HAVING COUNT(*) > 1 ORDER BY n DESC"


@pytest.mark.parametrize("question, sql, expected, note", [
    # what the 1.5B model wrote for a list the question wants whole; at the end of a statement, after a UNION
    ("Which token symbols are used by more than one contract? Most reused first.", f"{LIST} LIMIT 10", LIST,
     "dropped LIMIT 10: the question asks for every row, not 10"),
    ("List the singers' names.", "SELECT Name FROM singer ORDER BY Name\nLIMIT 5;", "SELECT Name FROM singer "
     "ORDER BY Name;", "dropped LIMIT 5: the question asks for every row, not 5"),
    ("Name every stadium and singer.", "SELECT Name FROM stadium UNION ALL SELECT Name FROM singer LIMIT 4",
     "SELECT Name FROM stadium UNION ALL SELECT Name FROM singer", "dropped LIMIT 4: the question asks for every row, not 4"),
    # the number asked for in digits or words, one row, a page, a subquery's LIMIT
    ("What are the 10 most reused symbols?", f"{LIST} LIMIT 10", None, None),
    ("Who are the 1,000 richest addresses?", "SELECT address FROM balances ORDER BY eth_balance DESC LIMIT 1000",
     None, None),
    ("Name the three oldest singers.", "SELECT Name FROM singer ORDER BY Age DESC LIMIT 3", None, None),
    ("Which singer is the oldest?", "SELECT Name FROM singer ORDER BY Age DESC LIMIT 1", None, None),
    ("List the singers' names.", "SELECT Name FROM singer ORDER BY Name LIMIT 10 OFFSET 10", None, None),
    ("What is their total?", "SELECT SUM(x) FROM (SELECT x FROM t ORDER BY x DESC LIMIT 100)", None, None),
    # the question leaves the count to the answer
    ("What are the top tokens by transfers?", "SELECT token_address FROM token_transfers GROUP BY 1 ORDER BY "
     "COUNT(*) DESC LIMIT 10", None, None),
    ("Show a few examples of failed transactions.", "SELECT hash FROM transactions WHERE receipt_status = 0 LIMIT 5",
     None, None),
    ("Which addresses received the most ETH yesterday?", "SELECT to_address FROM transactions GROUP BY 1 ORDER BY "
     "SUM(value) DESC LIMIT 10", None, None),
    ("What are the most recent transactions?", "SELECT hash FROM transactions ORDER BY block_timestamp DESC LIMIT 10",
     None, None),
    # a superlative that orders the whole list
    ("Give every sender's fees, highest fees first.", "SELECT from_address FROM transactions ORDER BY 1 LIMIT 10",
     "SELECT from_address FROM transactions ORDER BY 1", "dropped LIMIT 10: the question asks for every row, not 10"),
    ("List them.", "SELECT FROM LIMIT 5", None, None),  # unreadable
])
def test_a_limit_the_question_never_asks_for_is_dropped(question, sql, expected, note):
    assert drop_unasked_limit(sql, "bigquery", question) == (expected or sql, [note] if note else [])
