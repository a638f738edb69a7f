"""Flag columns and the phrases that name them, read from the Ethereum semantic model: what the free-SQL repair
`unasked_flags` keeps a condition for."""

from __future__ import annotations

import pytest

from askchain.domain import get_domain
from askchain.semantic.governed.naming import flag_columns, names_phrase, phrase_spans, phrase_words


@pytest.fixture(scope="module")
def flags():
    return flag_columns(get_domain("ethereum").semantic_model())


def test_true_false_dimensions_and_counted_conditions_make_flags_of_dataset_columns(flags):
    """A view's borrowed column is its table's (`token_is_erc721`: contracts.is_erc721); a numbered dimension only
    names a flag, so a block number is none."""
    assert {"transactions.receipt_status", "transactions.to_address", "contracts.is_erc20", "contracts.is_erc721",
            "traces.trace_address", "traces.status"} <= set(flags)
    assert "blocks.number" not in flags and "transactions.value" not in flags


def test_a_flag_is_tested_as_its_model_tests_it(flags):
    assert flags["transactions.to_address"].null_test and not flags["transactions.to_address"].value_test
    assert flags["transactions.receipt_status"].value_test and not flags["transactions.receipt_status"].null_test


def test_every_field_reading_a_flag_names_it(flags):
    """A counted condition of two columns names both (contracts deployed: no recipient and successful)."""
    status = flags["transactions.receipt_status"].phrases
    assert {"successful", "failed", "deployed"} <= set(status)
    assert "NFT" in flags["contracts.is_erc721"].phrases


@pytest.mark.parametrize("question, phrase, named", [
    ("How many top level calls failed?", "top-level", True),
    ("What share of contract-creation transactions failed?", "contract creation", True),
    ("How many NFTs were minted?", "NFT", True),
    ("How many non-fungible tokens moved?", "fungible", False),
    ("Transactions so far today", "to", False),
])
def test_a_phrase_is_named_word_for_word(question, phrase, named):
    assert names_phrase((phrase,), phrase_words(question)) is named


def test_a_phrase_is_found_where_the_question_writes_it():
    asked = phrase_words("The ratio of gas used to gas limit, and the gas limit itself")
    assert phrase_spans(("gas limit",), asked) == {range(6, 8), range(10, 12)}
    assert phrase_spans(("ratio of gas used to gas limit", "gas-limit"), asked) == {
        range(1, 8), range(6, 8), range(10, 12)}
    assert phrase_spans(("base fee",), asked) == set()
