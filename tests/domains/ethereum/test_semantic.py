"""The Ethereum semantic layer: the entries the issue's questions need, their SQL valid on the local dataset, and
the pipeline showing them to the model and saying how the question was read."""

from __future__ import annotations

import re

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.domain import get_domain
from askchain.llm.fake import ScriptedModel

LAYER = get_domain("ethereum").semantic_layer()


@pytest.mark.parametrize("question, expected", [
    ("What was the average gas price in gwei yesterday?", {"gas_price", "gwei", "yesterday"}),
    ("What share of transactions failed in the last 7 days?", {"share", "failed_transaction", "last_n_days"}),
    ("How much ETH was burned yesterday?", {"burned", "yesterday"}),
    ("Total USDC moved in the last 30 days, in total", {"token_USDC", "last_n_days", "in_total"}),
    ("Which whales hold the most ETH?", {"balance"}),
    ("How many blocks did Titan build this week so far?", {"builder_Titan", "this_week"}),
])
def test_the_questions_users_ask_get_their_definitions(question, expected):
    assert {r.entry.name for r in LAYER.match(question)} == expected


WINDOW = re.compile(r"^[^:]+: (.*?)(?:  \(blocks: .*\))?$")


@pytest.mark.parametrize("entry", [e for e in LAYER.entries if e.kind == "convention" and "block_timestamp" in e.definition
                                   and "GROUP BY" not in e.definition and "EXTRACT" not in e.definition],
                         ids=lambda e: e.name)
def test_every_time_window_is_valid_googlesql_on_the_local_dataset(eth_engine, entry):
    condition = WINDOW.match(entry.definition.format(n=7)).group(1)
    rows = eth_engine.execute(
        f"SELECT COUNT(*) FROM `bigquery-public-data.crypto_ethereum.transactions` WHERE {condition}").rows
    assert rows[0][0] >= 0


def test_the_pipeline_shows_the_definitions_and_says_how_it_read_the_question(eth_engine):
    sql = ("SELECT AVG(receipt_effective_gas_price) / 1e9 FROM `bigquery-public-data.crypto_ethereum.transactions` "
           "WHERE DATE(block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)")
    model = ScriptedModel({"direct": f"```sql\n{sql}\n```"})
    settings = get_settings().with_overrides(llm={"cache": False}, pipeline={"examples_k": 0, "value_retrieval": False})
    result = ask("What was the average gas price in gwei yesterday?", eth_engine, model=model, settings=settings)
    prompt = model.requests[0].messages[-1][1]
    assert "Definitions for this question" in prompt and "receipt_effective_gas_price" in prompt.split("Definitions")[1]
    assert result.readings == ["gwei = wei / 1e9", "yesterday = the full UTC day before today"]
    assert "Read as: gwei = wei / 1e9; yesterday = the full UTC day before today" in result.answer
