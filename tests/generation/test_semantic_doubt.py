"""A semantic query is doubted when its measure is not the one the question's words name; never a verified example."""

from __future__ import annotations

import json

import pytest

from askchain.domain import get_domain
from askchain.generation.semantic_doubt import naming_words, stem, unnamed_measure


@pytest.fixture(scope="module")
def model():
    return get_domain("ethereum").semantic_model()


def query(model_name: str, *measures: str) -> dict:
    return {"model": model_name, "measures": list(measures), "dimensions": [], "window": None}


@pytest.mark.parametrize("word, stemmed", [("transfers", "transfer"), ("transferred", "transfer"), ("minted", "mint"),
                                           ("senders", "sender"), ("address", "address"), ("Blocks", "block")])
def test_a_word_is_compared_without_its_plural_or_verb_ending(word, stemmed):
    assert stem(word) == stemmed


def test_a_measure_is_named_by_its_name_label_and_synonyms_not_by_how_it_aggregates(model):
    named = naming_words(model.specs["token_transfers"].measures["transfer_count"])
    assert "transfer" in named and "mint" in named and not named & {"count", "number", "total"}
    assert naming_words(model.specs["transactions"].measures["avg_value_eth"]) == {"valu"}


@pytest.mark.parametrize("question, measure, doubted", [
    ("Which 3 tokens were moved most often last week, by number of transfers?", "distinct_senders", True),
    ("Which 3 tokens were moved most often last week, by number of transfers?", "transfer_count", False),
    ("How many unique senders moved tokens last week?", "distinct_senders", False),
    ("Which 3 tokens had the most unique senders last week?", "distinct_senders", False),
])
def test_a_measure_the_question_does_not_name_is_doubted_where_it_names_another(model, question, measure, doubted):
    reason = unnamed_measure(model, query("token_transfers", measure), question)
    assert bool(reason) is doubted
    if doubted:
        assert measure in reason and "transfer_count" in reason


def test_a_measure_is_not_doubted_where_the_question_names_no_measure_of_its_model(model):
    assert unnamed_measure(model, query("blocks", "block_count"), "Give me the figure for yesterday.") == ""


def test_a_dimension_only_listing_and_an_unknown_model_are_never_doubted(model):
    listing = {"model": "blocks", "measures": [], "dimensions": ["number", "gas_used"], "window": None}
    assert unnamed_measure(model, listing, "Which 3 blocks used the most gas?") == ""
    assert unnamed_measure(model, query("no_such_model", "x"), "How many transfers?") == ""


def test_no_verified_example_is_doubted(model):
    """The check's false alarms on the questions whose semantic queries are known right: none."""
    path = get_domain("ethereum").semantic_examples_file
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doubted = {row["id"]: unnamed_measure(model, row["query"], row["question"]) for row in rows}
    assert {key: reason for key, reason in doubted.items() if reason} == {}
