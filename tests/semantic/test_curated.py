"""The curated views for free SQL (askchain.semantic.governed.curated): each runs on the bank's pinned build with one
row per row of its base table; its columns hold what the bank's conventions compute; a query written over them and
inlined by the repair equals the query written by hand over the dataset's tables."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from askchain.domain import get_domain
from askchain.rules.repairs.curated_views import inline_curated_views, write_curated

DATASET = "`bigquery-public-data.crypto_ethereum`"


@pytest.fixture(scope="module")
def views(semantic_model):
    return semantic_model.curated


def inlined(sql: str, views) -> str:
    text, notes = inline_curated_views(sql, "bigquery", tuple(views.values()))
    assert notes, "the query reads no curated view"
    return text


def test_every_view_has_one_row_per_row_of_its_base_table(views, run_pinned):
    assert {"ez_transactions", "ez_token_transfers", "ez_traces", "ez_logs", "ez_blocks"} <= set(views)
    for name, view in views.items():
        _, [(in_view,)] = run_pinned(inlined(f"SELECT COUNT(*) FROM {name}", views))
        _, [(in_table,)] = run_pinned(f"SELECT COUNT(*) FROM {DATASET}.{view.base}")
        assert in_view == in_table > 0, name


def test_the_columns_hold_what_the_conventions_compute(views, run_pinned):
    over_view = inlined("SELECT SUM(fee_eth), SUM(value_eth), MAX(gas_price_gwei), COUNT(block_base_fee_per_gas) "
                        "FROM ez_transactions", views)
    by_hand = (f"SELECT SUM(t.receipt_gas_used * t.receipt_effective_gas_price) / 1e18, SUM(t.value) / 1e18, "
               f"MAX(t.gas_price) / 1e9, COUNT(b.base_fee_per_gas) FROM {DATASET}.transactions AS t "
               f"LEFT JOIN {DATASET}.blocks AS b ON t.block_number = b.number")
    assert _rounded(run_pinned(over_view)[1]) == _rounded(run_pinned(by_hand)[1])


def test_a_query_over_a_view_equals_the_same_query_by_hand(views, run_pinned):
    over_view = inlined("SELECT token_symbol, SUM(amount) AS amount FROM ez_token_transfers "
                        "WHERE token_symbol IS NOT NULL GROUP BY token_symbol ORDER BY amount DESC LIMIT 3", views)
    by_hand = (f"SELECT k.symbol, SUM(SAFE_CAST(t.value AS BIGNUMERIC) / POWER(10, CAST(k.decimals AS INT64))) AS "
               f"amount FROM {DATASET}.token_transfers AS t JOIN {DATASET}.tokens AS k ON t.token_address = k.address "
               f"GROUP BY k.symbol ORDER BY amount DESC LIMIT 3")
    assert _rounded(run_pinned(over_view)[1]) == _rounded(run_pinned(by_hand)[1])


def test_a_view_keeps_only_the_columns_and_joins_the_query_names(views):
    sql = inlined("SELECT SUM(fee_eth) FROM ez_transactions", views)
    assert "fee_eth" in sql and "JOIN" not in sql and "value_eth" not in sql
    assert "blocks" in inlined("SELECT AVG(block_base_fee_per_gas) FROM ez_transactions", views)


def test_every_view_says_what_it_adds_to_its_table(views):
    note = views["ez_transactions"].note()
    assert note.startswith("ez_transactions: every column of transactions, and ")
    assert "block_base_fee_per_gas (blocks.base_fee_per_gas)" in note and "fee_eth: " in note


def _rounded(rows):
    return [tuple(round(float(v), 6) if isinstance(v, (float, Decimal)) else v for v in row) for row in rows]


def test_every_pool_example_over_a_view_returns_its_gold_rows(views, run_pinned):
    """What prompts show of the pool's examples (askchain.rules.repairs.curated_views.write_curated), inlined as the
    repair inlines the model's SQL, returns the gold's rows on the pinned build."""
    domain = get_domain("ethereum")
    bank = [json.loads(line) for line in domain.eval_file.read_text().splitlines() if line.strip()]
    pool = [pair for pair in bank if pair["split"] == "pool"]
    written = 0
    for pair in pool:
        shown = write_curated(pair["gold_sql"], tuple(views.values()), domain.bigquery_dataset, "bigquery")
        if shown == pair["gold_sql"]:
            continue
        written += 1
        assert "ez_" in shown and "crypto_ethereum" not in shown, pair["id"]
        assert _rounded(run_pinned(inlined(shown, views))[1]) == _rounded(run_pinned(pair["gold_sql"])[1]), pair["id"]
    assert written >= 100  # most pool questions read one table
