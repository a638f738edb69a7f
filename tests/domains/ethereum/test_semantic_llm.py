"""Issue 47's three questions, and an average per hour, with the embedded model through `askchain ask`: answered right through the semantic
path (the governed model's measures and windows), and the answer says what it measured and over which window."""

from __future__ import annotations

import pytest

from askchain.eval.compare import spider2_ex

pytestmark = pytest.mark.llm

T = "`bigquery-public-data.crypto_ethereum.transactions`"
B = "`bigquery-public-data.crypto_ethereum.blocks`"
TT = "`bigquery-public-data.crypto_ethereum.token_transfers`"
TOKENS = "`bigquery-public-data.crypto_ethereum.tokens`"
LAST_DAYS = ("DATE({ts}) >= DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY) AND DATE({ts}) < CURRENT_DATE()")


@pytest.mark.parametrize("question, gold, reading", [
    ("What share of transactions failed in the last 7 days?",
     f"SELECT SAFE_DIVIDE(COUNTIF(receipt_status = 0), COUNT(*)) FROM {T} WHERE "
     + LAST_DAYS.format(ts="block_timestamp", n=7),
     ("failed share of transactions, a fraction", "the 7 full UTC days before today")),
    ("How much ETH was burned per day over the last 30 days?",
     f"SELECT DATE(timestamp) AS day, SUM(base_fee_per_gas * gas_used) / 1e18 FROM {B} WHERE "
     + LAST_DAYS.format(ts="timestamp", n=30) + " GROUP BY day ORDER BY day",
     ("in ETH", "the 30 full UTC days before today", "grouped by day")),
    ("Top 5 tokens by number of transfers yesterday, with their symbols",
     f"SELECT tt.token_address, t.symbol, COUNT(*) AS transfers FROM {TT} tt LEFT JOIN {TOKENS} t "
     "ON t.address = tt.token_address WHERE DATE(tt.block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY) "
     "GROUP BY tt.token_address, t.symbol ORDER BY transfers DESC LIMIT 5",
     ("transfers", "yesterday")),
    # the count of the window over the hours it spans (an hour without transactions counts), not a block's average
    ("On average, how many transactions were there per hour over the last 3 days?",
     f"SELECT COUNT(*) / 72 FROM {T} WHERE " + LAST_DAYS.format(ts="block_timestamp", n=3),
     ("averaged per hour", "the 3 full UTC days before today")),
])
def test_the_semantic_path_answers_and_says_what_it_measured(ask_cli, eth_engine, question, gold, reading):
    result, _ = ask_cli(question)
    expected = eth_engine.execute(gold)
    assert result["error"] is None, result["sql"]
    judged = expected.columns[1:] if "symbol" in gold else expected.columns  # the symbol is the asked-for label
    rows = [list(r)[1:] for r in expected.rows] if "symbol" in gold else expected.rows
    assert spider2_ex(judged, rows, result["columns"], result["rows"]), (result["sql"], result["rows"])
    read_as = " ".join(result["readings"])  # a semantic query's own reading: its measure, unit and window
    assert all(part in read_as for part in reading), read_as
    assert "Read as:" in (result["answer"] or "")
