"""Questions the Ethereum data cannot answer get the domain's "This data has no …" answer before any SQL is written;
answerable ones are answered. With the scripted model, and once with the embedded model on the default dataset."""

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel

BLOCKS = "SELECT COUNT(*) AS blocks FROM `bigquery-public-data.crypto_ethereum.blocks`"


def settings():
    return get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "answer": False,
                                                   "generators": {"semantic": {"enabled": False}}})  # the free-SQL path these tests script


@pytest.mark.parametrize("question,concept", [
    ("What is the price of ETH in USD?", "prices"),
    ("Which ENS name holds the most ETH?", "ens"),
    ("How much ETH did Binance's hot wallets receive in the last 30 days?", "labels"),
    ("What will the average gas price be tomorrow?", "forecasts"),
    ("How many pending transactions are in the mempool right now?", "off-chain"),
])
def test_a_missing_concept_is_answered_without_sql_or_a_model_call(eth_engine, question, concept):
    model = ScriptedModel({})  # any request would fail: none is made
    events = []
    result = ask(question, eth_engine, model=model, settings=settings(), on_event=events.append)
    assert result.abstained and result.sql is None and result.error is None and model.requests == []
    assert result.answer.startswith("This data has no ")
    assert result.confidence_reasons == [f"the domain's data declares {concept} absent"]
    assert next(e for e in events if e["type"] == "abstained")["concept"] == concept


def test_an_answerable_question_is_answered(eth_engine):
    model = ScriptedModel({"direct": BLOCKS})
    result = ask("How many blocks are in the dataset?", eth_engine, model=model, settings=settings())
    assert not result.abstained and result.error is None and result.rows[0][0] > 0
    assert result.confidence == "high"


def test_the_domains_declarations_stand_in_for_asking_the_model(eth_engine):
    """Words the schema does not spell ("whales") are the domain's own vocabulary, not missing data."""
    model = ScriptedModel({"direct": BLOCKS})
    result = ask("How many whales (addresses with more than 1,000 ETH) are there?", eth_engine, model=model,
                 settings=settings())
    assert not result.abstained and [r.template for r in model.requests] == ["direct"]


@pytest.mark.llm
def test_the_price_of_eth_with_the_embedded_model_on_the_default_dataset():
    result = ask("What is the price of ETH in USD?", settings=get_settings().with_overrides(llm={"cache": False}))
    assert result.abstained and result.sql is None and result.error is None
    assert result.answer.startswith("This data has no prices")
    assert "1.5b" in result.model  # the default model, loaded; the domain answered before any call to it
