"""The Ethereum evaluation set: well-formed, GoogleSQL with full names, and every gold query answers on a small build."""

from __future__ import annotations

import json
from importlib import resources

import pytest

QUESTIONS = [json.loads(line) for line in
             resources.files("askchain.domains.ethereum").joinpath("eval/questions.jsonl").read_text().splitlines() if line.strip()]

ORIGINAL = {
    "Which 10 miners have mined the most blocks?":
        "SELECT miner FROM `bigquery-public-data.crypto_ethereum.blocks` GROUP BY miner ORDER BY COUNT(*) DESC LIMIT 10",
    "What are the per-day average base fee per gas and total gas used on Ethereum for the last 30 days?":
        "SELECT DATE(timestamp) AS date, AVG(base_fee_per_gas) AS avg_base_fee, SUM(gas_used) AS total_gas_used FROM "
        "`bigquery-public-data.crypto_ethereum.blocks` WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) AND "
        "DATE(timestamp) < CURRENT_DATE() GROUP BY date ORDER BY date ASC",
    "Find the average gas used by transactions after 1 December 2025 that interacted with ERC-721 (NFT) contracts, compared "
    "with non-NFT contracts.":
        "SELECT c.is_erc721, AVG(tx.receipt_gas_used) AS avg_gas FROM `bigquery-public-data.crypto_ethereum.transactions` tx "
        "JOIN `bigquery-public-data.crypto_ethereum.contracts` c ON tx.to_address = c.address WHERE tx.block_timestamp >= "
        "'2025-12-01' AND c.is_erc721 IS NOT NULL GROUP BY c.is_erc721",
    "Which 10 days of the year have historically had the highest average gas used per Ethereum block, and what is the "
    "average gas used per block for each of those days?":
        "SELECT EXTRACT(DAYOFYEAR FROM timestamp) AS day_of_year, AVG(gas_used) AS total_gas_used FROM "
        "`bigquery-public-data.crypto_ethereum.blocks` WHERE gas_used IS NOT NULL GROUP BY day_of_year ORDER BY "
        "total_gas_used DESC LIMIT 10",
    "Which ERC-20 tokens were created in the last 30 days, and what are their names and symbols? Exclude any tokens with "
    "missing name or symbol.":
        "SELECT DISTINCT t.name, t.symbol FROM `bigquery-public-data.crypto_ethereum.contracts` c JOIN "
        "`bigquery-public-data.crypto_ethereum.tokens` t ON c.address = t.address WHERE DATE(c.block_timestamp) >= "
        "DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) AND DATE(c.block_timestamp) < CURRENT_DATE() AND t.name IS NOT NULL "
        "AND t.symbol IS NOT NULL AND c.is_erc20 = TRUE ORDER BY t.name, t.symbol",
}


def test_shape():
    assert len(QUESTIONS) >= 60
    assert len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert {"id", "question", "gold_sql", "category", "difficulty"} <= set(q)
        assert q["difficulty"] in ("simple", "moderate", "challenging")
        assert "`bigquery-public-data.crypto_ethereum." in q["gold_sql"]
    assert {"blocks", "transactions", "fees", "tokens", "transfers", "nfts", "contracts", "traces", "balances"} <= {q["category"] for q in QUESTIONS}


def test_original_questions_are_verbatim():
    by_question = {q["question"]: q["gold_sql"] for q in QUESTIONS}
    for question, gold in ORIGINAL.items():
        assert by_question[question] == gold


def test_original_answers_have_the_expected_shape(eth_engine):
    miners, daily, nft = (eth_engine.execute(sql).rows for sql in list(ORIGINAL.values())[:3])
    assert len(daily) == 30 and len(miners) == 10 and {row[0] for row in nft} == {True, False}


@pytest.mark.parametrize("item", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_gold_query_answers(eth_engine, item):
    result = eth_engine.execute(item["gold_sql"], max_rows=100_000)
    assert result.rows, f"{item['id']} returned no rows"
    assert any(v is not None for v in result.rows[0])
