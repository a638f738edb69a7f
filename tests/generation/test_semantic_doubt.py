"""A semantic query is doubted when its measure is not the one the question's words name, or when it aggregates rows the
question lists; never a verified example."""

from __future__ import annotations

import json

import pytest

from askchain.domain import get_domain
from askchain.generation.semantic_doubt import (
    naming_words, reason_to_doubt, stem, without_counts_of_unnamed_flags, without_filters_a_share_counts,
    without_grouped_counts, without_unnamed_dimensions, without_unnamed_flags, without_unnamed_measures,
    without_values_no_row_has)


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


def test_a_function_word_names_no_measure(model):
    """"over the gas target" is a synonym; "over" in "over the last 30 days" names nothing."""
    named = naming_words(model.specs["blocks"].measures["above_gas_target_count"])
    assert "over" not in named and {"gas", "target"} <= named


@pytest.mark.parametrize("question, measure, doubted", [
    ("Which 3 tokens were moved most often last week, by number of transfers?", "distinct_senders", True),
    ("Which 3 tokens were moved most often last week, by number of transfers?", "transfer_count", False),
    ("How many unique senders moved tokens last week?", "distinct_senders", False),
    ("Which 3 tokens had the most unique senders last week?", "distinct_senders", False),
])
def test_a_measure_the_question_does_not_name_is_doubted_where_it_names_another(model, question, measure, doubted):
    reason = reason_to_doubt(model, query("token_transfers", measure), question)
    assert bool(reason) is doubted
    if doubted:
        assert measure in reason and "transfer_count" in reason


def test_a_measure_is_not_doubted_where_the_question_names_no_measure_of_its_model(model):
    assert reason_to_doubt(model, query("blocks", "block_count"), "Give me the figure for yesterday.") == ""


def test_a_dimension_only_listing_and_an_unknown_model_are_never_doubted(model):
    listing = {"model": "blocks", "measures": [], "dimensions": ["number", "gas_used"], "window": None}
    assert reason_to_doubt(model, listing, "Which 3 blocks used the most gas?") == ""
    assert reason_to_doubt(model, query("no_such_model", "x"), "How many transfers?") == ""


@pytest.mark.parametrize("question, listed", [
    ("List the 4 blocks with the largest gas limit last week, with their numbers.", True),
    ("Which 3 busiest blocks of yesterday had the most transactions?", True),
    ("Top 3 block builders by blocks produced last week.", False),
    ("How many ERC-20 blocks were there?", False),
])
def test_an_aggregate_over_the_rows_a_question_lists_is_doubted(model, question, listed):
    reason = reason_to_doubt(model, {**query("blocks", "max_gas_used"), "dimensions": ["block_time"]}, question)
    assert ("the question lists" in reason) is listed
    listing = {"model": "blocks", "measures": [], "dimensions": ["number", "gas_limit"], "window": None}
    assert reason_to_doubt(model, listing, question) == ""


def test_no_verified_example_is_doubted(model):
    """The check's false alarms on the questions whose semantic queries are known right: none."""
    path = get_domain("ethereum").semantic_examples_file
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doubted = {row["id"]: reason_to_doubt(model, row["query"], row["question"]) for row in rows}
    assert {key: reason for key, reason in doubted.items() if reason} == {}
    assert [row["id"] for row in rows if without_unnamed_measures(model, row["query"], row["question"]) != row["query"]] == []
    assert [row["id"] for row in rows if without_grouped_counts(model, row["query"]) != row["query"]] == []


@pytest.mark.parametrize("condition, doubted", [
    ({"field": "is_token", "op": "=", "value": True}, True),  # no word of the question names tokens
    ({"field": "block_time", "op": ">=", "value": "2024-01-01"}, True),  # a year the question never writes
    ({"field": "block_time", "op": ">=", "value": "2025-03-01"}, False),
    ({"field": "is_erc721", "op": "=", "value": True}, False),  # "NFT" names it
    ({"field": "address", "op": "=", "value": "0x00000000000000000000000000000000000000aa"}, False),
])
def test_a_filter_the_question_neither_names_nor_writes_is_doubted(model, condition, doubted):
    question = "How many NFT contracts were created per day since March 2025, and how many by 0x…aa (0x00000000000000000000000000000000000000aa)?"
    reason = reason_to_doubt(model, {**query("contracts", "contract_count"), "filters": [condition]}, question)
    assert ("names no filter" in reason) is doubted


@pytest.mark.parametrize("window, question, doubted", [
    ({"name": "last_n_days", "n": 365}, "How many blocks were produced after 1 March?", True),
    ({"name": "last_n_days", "n": 14}, "How many blocks were produced in the last 14 days?", False),
    ({"name": "last_n_days", "n": 7}, "How many blocks were produced over the past week?", False),
    ({"name": "last_n_days", "n": 7}, "How many blocks were produced in the last seven days?", False),
    ({"name": "last_n_days", "n": 14}, "How many blocks were produced in the past two weeks?", False),
    ({"name": "last_n_months", "n": 5}, "How many blocks were produced in recent months?", False),  # days only
])
def test_a_window_counting_days_the_question_never_counts_is_doubted(model, window, question, doubted):
    reason = reason_to_doubt(model, {**query("blocks", "block_count"), "window": window}, question)
    assert ("counts no" in reason) is doubted


def test_an_unnamed_measure_beside_a_named_one_is_dropped_and_one_alone_is_left_to_doubt(model):
    question = "How much ETH was burned each day last week?"
    extra = {**query("blocks", "eth_burned", "avg_gas_used"), "order_by": [{"field": "avg_gas_used", "direction": "desc"}]}
    assert without_unnamed_measures(model, extra, question) == {**query("blocks", "eth_burned"), "order_by": []}
    alone = query("blocks", "avg_gas_used")
    assert without_unnamed_measures(model, alone, question) == alone and reason_to_doubt(model, alone, question)


MINT = {"field": "is_mint", "op": "=", "value": True}
NFT = {"field": "is_nft", "op": "=", "value": True}


@pytest.mark.parametrize("question, kept", [
    ("How many ERC-721 token transfers happened yesterday?", [NFT]),  # nobody asked for mints
    ("How many NFTs were minted yesterday?", [NFT, MINT]),
    ("How many NFT transfers came from the zero address yesterday?", [NFT, MINT]),
    ("How many NFT transfers came from 0x0000000000000000000000000000000000000000 yesterday?", [NFT, MINT]),
    ("How many token transfers happened yesterday?", []),
])
def test_a_true_false_filter_the_question_never_names_is_dropped(model, question, kept):
    transfers = {**query("token_transfers", "transfer_count"), "filters": [NFT, MINT]}
    assert without_unnamed_flags(model, transfers, question)["filters"] == kept


def test_a_filter_on_a_dimension_that_is_not_true_false_is_left_to_doubt(model):
    dai = {"field": "token_address", "op": "=", "value": "0x6b175474e89094c44da98b954eedeac495271d0f"}
    by_address = {**query("token_transfers", "transfer_count"), "filters": [dai]}
    assert without_unnamed_flags(model, by_address, "How many DAI transfers happened yesterday?") == by_address


FAILED_CALLS = {**query("traces", "failed_count"), "dimensions": ["call_type", "day"],
                "order_by": [{"field": "call_type", "direction": "asc"}]}


@pytest.mark.parametrize("question, kept", [
    ("How many calls failed each day last week?", ["day"]),  # a call type nobody asked for
    ("How many calls of each call type failed each day last week?", ["call_type", "day"]),
    ("How many delegatecall and staticcall traces failed each day last week?", ["call_type", "day"]),  # a synonym
])
def test_a_split_the_question_never_names_is_dropped(model, question, kept):
    fitted = without_unnamed_dimensions(model, FAILED_CALLS, question)
    assert fitted["dimensions"] == kept
    assert fitted["order_by"] == ([] if kept == ["day"] else FAILED_CALLS["order_by"])


def test_a_ranking_keeps_what_it_ranks_whatever_the_question_calls_it(model):
    ranked = {**query("transactions", "transaction_count"), "dimensions": ["from_address"], "limit": 5}
    assert without_unnamed_dimensions(model, ranked, "Which 5 accounts were busiest yesterday?") == ranked
    ordered = {**ranked, "limit": None, "order_by": [{"field": "transaction_count", "direction": "desc"}]}
    assert without_unnamed_dimensions(model, ordered, "Rank the accounts by transactions yesterday") == ordered


@pytest.mark.parametrize("question, kept", [
    ("How many non-fungible token transfers happened today?", False),  # "fungible" is not a word here
    ("How many fungible token transfers happened today?", True),
    ("How many ERC20 transfers happened today?", True),  # ERC-20 written without its hyphen
])
def test_a_phrase_names_a_flag_word_for_word(model, question, kept):
    erc20 = {**query("token_transfers", "transfer_count"), "filters": [{"field": "is_erc20", "op": "=", "value": True}]}
    assert (without_unnamed_flags(model, erc20, question) == erc20) is kept


FAILED = {"field": "status", "op": "=", "value": 0}
TO_ROUTER = {"field": "to_address", "op": "=", "value": "0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad"}


@pytest.mark.parametrize("measures, kept", [
    (["failed_share"], [TO_ROUTER]),  # the failed share of failed calls is 1
    (["failed_count"], [FAILED, TO_ROUTER]),  # a count is no share
    (["failed_share", "trace_count"], [FAILED, TO_ROUTER]),  # the count beside it wants the filter
])
def test_a_filter_on_what_a_share_counts_is_dropped(model, measures, kept):
    calls = {**query("traces", *measures), "filters": [FAILED, TO_ROUTER]}
    assert without_filters_a_share_counts(model, calls)["filters"] == kept


def test_a_ratio_is_no_share_of_counted_rows(model):
    full = {**query("blocks", "avg_fullness"), "filters": [{"field": "gas_used", "op": ">", "value": 15000000}]}
    assert without_filters_a_share_counts(model, full) == full


CREATES = {"field": "trace_type", "op": "=", "value": "create"}


@pytest.mark.parametrize("condition, fitted", [
    ({"field": "trace_type", "op": "=", "value": "top_level"}, []),  # no trace has that type
    ({"field": "trace_type", "op": "in", "value": ["top_level", "nested"]}, []),
    ({"field": "trace_type", "op": "=", "value": "CREATE"}, [CREATES]),  # GoogleSQL compares case and all
    (CREATES, [CREATES]),
    ({"field": "call_type", "op": "in", "value": ["delegatecall", "unknown"]},
     [{"field": "call_type", "op": "in", "value": ["delegatecall"]}]),
    ({"field": "trace_type", "op": "in", "value": {"step": 1}}, None),  # an earlier step's values
    ({"field": "to_address", "op": "=", "value": "0xabc"}, None),  # values not declared: any may be
    ({"field": ["trace_type"], "op": "=", "value": "x"}, None),  # malformed: the layer rejects it
])
def test_a_filter_on_a_value_its_dimension_never_takes_is_dropped(model, condition, fitted):
    calls = {**query("traces", "trace_count"), "filters": [condition]}
    assert without_values_no_row_has(model, calls)["filters"] == ([condition] if fitted is None else fitted)


def test_a_count_of_the_grouped_dimensions_own_values_is_dropped_beside_another_measure(model):
    """Distinct tokens per token is 1 on every row; distinct tokens per day, or alone, is a question of its own."""
    by_token = {**query("token_transfers", "transfer_count", "distinct_tokens"), "dimensions": ["token_address"],
                "order_by": [{"field": "distinct_tokens", "direction": "desc"}]}
    assert without_grouped_counts(model, by_token) == {
        **query("token_transfers", "transfer_count"), "dimensions": ["token_address"], "order_by": []}
    by_day = {**by_token, "dimensions": ["day"]}
    assert without_grouped_counts(model, by_day) == by_day
    alone = {**query("token_transfers", "distinct_tokens"), "dimensions": ["token_address"]}
    assert without_grouped_counts(model, alone) == alone


def test_a_count_alone_of_a_grouped_dimensions_values_drops_that_dimension_where_another_stays(model):
    """Senders grouped by sender and receiver, counting distinct receivers: receivers per sender was meant."""
    both = {**query("token_transfers", "distinct_receivers"), "dimensions": ["from_address", "to_address"],
            "order_by": [{"field": "to_address", "direction": "asc"},
                         {"field": "distinct_receivers", "direction": "desc"}]}
    assert without_grouped_counts(model, both) == {
        **both, "dimensions": ["from_address"], "order_by": [{"field": "distinct_receivers", "direction": "desc"}]}


@pytest.mark.parametrize("dimension, doubted", [("to_address", True), ("from_address", False)])
def test_a_count_of_the_grouped_dimensions_own_values_alone_is_doubted(model, dimension, doubted):
    question = "Which 5 addresses sent USDC to the most distinct receivers?"
    grouped = {**query("token_transfers", "distinct_receivers"), "dimensions": [dimension]}
    assert ("1 on every row" in reason_to_doubt(model, grouped, question)) is doubted


BY_TYPE = {**query("transactions", "failed_percentage", "transaction_count"), "dimensions": ["transaction_type"],
           "order_by": [{"field": "failed_percentage", "direction": "desc"}]}


@pytest.mark.parametrize("question, kept", [
    ("What percentage of transactions in the last 7 days was of each type?", ["transaction_count"]),
    ("What percentage of transactions of each type failed last week?", ["failed_percentage", "transaction_count"]),
    ("How many transactions of each type, and what percentage reverted?", ["failed_percentage", "transaction_count"]),
    ("Per type, the number of transactions and their receipt status breakdown", ["failed_percentage",
                                                                                 "transaction_count"]),
])
def test_a_measure_counting_a_flag_nobody_names_is_dropped_beside_another(model, question, kept):
    assert without_counts_of_unnamed_flags(model, BY_TYPE, question)["measures"] == kept


@pytest.mark.parametrize("measures", [["failed_percentage"], ["failed_percentage", "no_such_measure"]])
def test_a_measure_counting_a_flag_nobody_names_is_left_alone_to_doubt(model, measures):
    alone = {**BY_TYPE, "measures": measures}
    assert without_counts_of_unnamed_flags(model, alone, "What percentage of transactions was of each type?") == alone
