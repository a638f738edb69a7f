"""The measures and dimensions a semantic query picks, set against its question's words: each rule's pass cases (left
as written) and fail cases (the field the question names at length, the measure in the unit it asks for)."""

from __future__ import annotations

import pytest

from askchain.domain import get_domain
from askchain.generation.semantic_measures import (
    count_when_asked, dimension_named_at_length, measure_in_the_unit_asked, measure_named_at_length,
    asks_for_share_of_a_part, count_threshold_when_asked, per_one_when_asked, share_of_part_when_asked,
    share_only_when_asked, unit_asked)

MODEL = get_domain("ethereum").semantic_model()
BLOCKS, WITHDRAWALS, TRANSACTIONS = (MODEL.specs[name] for name in ("blocks", "withdrawals", "transactions"))


def query(model: str, *measures: str, **rest) -> dict:
    return {"model": model, "measures": list(measures), "dimensions": [], "window": {"name": "yesterday"}, **rest}


RATIO = "What was the average ratio of gas used to gas limit per block yesterday?"


def test_picks_named_inside_a_longer_phrase_give_way_to_the_measure_it_names():
    picked = query("blocks", "avg_gas_used", "avg_gas_limit",
                   order_by=[{"field": "avg_gas_limit", "direction": "desc"}])
    assert measure_named_at_length(picked, RATIO, BLOCKS) == query(
        "blocks", "avg_fullness", order_by=[{"field": "avg_fullness", "direction": "desc"}])


def test_an_unnamed_pick_in_another_unit_stays_beside_the_longer_phrases_measure():
    picked = query("blocks", "avg_gas_limit", "eth_burned")
    assert measure_named_at_length(picked, RATIO, BLOCKS)["measures"] == ["avg_fullness", "eth_burned"]


@pytest.mark.parametrize("question, measures", [
    ("What was the average gas limit of blocks yesterday?", ["avg_gas_limit"]),  # named, and by nothing longer
    ("The average gas limit, and the ratio of gas used to gas limit, yesterday", ["avg_gas_limit"]),  # named apart
    (RATIO, ["avg_fullness"]),  # the longer phrase's own measure
    (RATIO, ["eth_burned"]),  # named nowhere: left to doubt
    (RATIO, ["avg_gas_limit", "block_count"]),  # one named elsewhere ("per block")
])
def test_a_pick_named_on_its_own_or_not_at_all_is_kept(question, measures):
    picked = query("blocks", *measures)
    assert measure_named_at_length(picked, question, BLOCKS) == picked


FEE_RECIPIENTS = "Which 3 fee recipients carried the most blob transactions in their blocks over the last 30 days?"


def test_a_dimension_named_inside_a_longer_phrase_gives_way_to_the_dimension_it_names():
    picked = query("transactions", "transaction_count", dimensions=["to_address"],
                   order_by=[{"field": "to_address", "direction": "asc"}])
    assert dimension_named_at_length(picked, FEE_RECIPIENTS, TRANSACTIONS) == query(
        "transactions", "transaction_count", dimensions=["miner"], order_by=[{"field": "miner", "direction": "asc"}])


def test_a_day_named_inside_the_day_of_the_week_is_the_weekday():
    question = "Which day of the week had the most blocks over the last 4 weeks?"
    assert dimension_named_at_length(query("blocks", "block_count", dimensions=["day"]), question,
                                     BLOCKS)["dimensions"] == ["weekday"]


def test_a_true_false_dimension_never_replaces_a_split():
    question = "Which addresses received the most tokens in mint transfers (from the zero address) yesterday?"
    picked = query("token_transfers", "transfer_count", dimensions=["to_address", "from_address"])
    assert dimension_named_at_length(picked, question, MODEL.specs["token_transfers"]) == picked


@pytest.mark.parametrize("question, dimensions", [
    ("Which 3 recipients received the most transactions yesterday?", ["to_address"]),  # named on its own
    ("Which fee recipients got the most transactions yesterday, and which recipients were sent the most?",
     ["to_address"]),  # named apart too
    (FEE_RECIPIENTS, ["miner"]),  # the longer phrase's own dimension
    (FEE_RECIPIENTS, ["from_address"]),  # named nowhere: left to doubt
])
def test_a_dimension_named_on_its_own_or_not_at_all_is_kept(question, dimensions):
    picked = query("transactions", "transaction_count", dimensions=dimensions)
    assert dimension_named_at_length(picked, question, TRANSACTIONS) == picked


@pytest.mark.parametrize("question, unit", [
    ("How much ETH was paid out through validator withdrawals yesterday? (amounts are in gwei)", "ETH"),
    ("What was the average gas price yesterday, in gwei?", "gwei"),
    ("Average block fullness yesterday as a fraction between 0 and 1", "fraction"),
    ("Daily ETH paid out through withdrawals (amounts are in gwei)", None),  # how the data stores it
    ("How many withdrawals were there yesterday?", None),
])
def test_the_unit_a_question_asks_for(question, unit):
    assert unit_asked(question) == unit


def test_a_count_gives_way_to_the_measure_in_the_unit_asked():
    question = "How much ETH was paid out through validator withdrawals yesterday?"
    assert measure_in_the_unit_asked(query("withdrawals", "withdrawal_count"), question, WITHDRAWALS) == query(
        "withdrawals", "withdrawn_eth")


def test_a_mean_is_taken_only_where_an_average_is_asked():
    question = "How much ETH did a validator withdrawal pay out on average yesterday?"
    assert measure_in_the_unit_asked(query("withdrawals", "withdrawal_count"), question, WITHDRAWALS) == query(
        "withdrawals", "avg_withdrawal_eth")


def test_a_count_asked_for_stays_beside_the_measure_in_the_unit_asked():
    question = "How many validator withdrawals were there yesterday, and how much ETH did they pay out?"
    assert measure_in_the_unit_asked(query("withdrawals", "withdrawal_count"), question, WITHDRAWALS)["measures"] == [
        "withdrawal_count", "withdrawn_eth"]


@pytest.mark.parametrize("picked, question", [
    (query("withdrawals", "withdrawn_eth"), "How much ETH was withdrawn yesterday?"),  # in the unit already
    ({**query("transactions", "transaction_count"), "dimensions": ["value_eth"]},
     "List yesterday's transactions with their value in ETH"),  # a dimension in the unit
    (query("transactions", "transaction_count"), "How much ETH did the transactions carry yesterday?"),  # none named
    (query("withdrawals", "withdrawal_count"), "How many withdrawals were there yesterday?"),  # no unit asked
])
def test_a_query_in_the_unit_asked_or_with_no_measure_named_in_it_is_kept(picked, question):
    spec = MODEL.specs[picked["model"]]
    assert measure_in_the_unit_asked(picked, question, spec) == picked


@pytest.mark.parametrize("malformed", [{"order_by": "withdrawal_count desc"}, {"dimensions": [{"name": "day"}]}])
def test_a_malformed_order_or_dimension_is_left_for_the_layer_to_reject(malformed):
    picked = query("withdrawals", "withdrawal_count", **malformed)
    fitted = measure_in_the_unit_asked(picked, "How much ETH was withdrawn yesterday?", WITHDRAWALS)
    assert fitted == {**picked, "measures": ["withdrawn_eth"]}


BLOB_CARRIERS = ("Which 3 fee recipients carried the most blob gas over the last 30 days, and for each, how many blob "
                 "transactions did its blocks carry and how many blobs did they carry on average?")


def test_the_count_of_rows_asked_for_joins_the_measures_picked_beside_it():
    picked = query("transactions", "avg_blobs", dimensions=["miner"])
    assert count_when_asked(picked, BLOB_CARRIERS, TRANSACTIONS)["measures"] == ["transaction_count", "avg_blobs"]



def test_the_count_of_rows_joins_a_distinct_count_which_counts_values():
    picked = query("traces", "distinct_callees", filters=[{"field": "call_type", "op": "=", "value": "delegatecall"}])
    question = "How many delegatecalls were made yesterday, and to how many distinct contracts?"
    assert count_when_asked(picked, question, MODEL.specs["traces"])["measures"] == ["trace_count", "distinct_callees"]


@pytest.mark.parametrize("question, measures", [
    (BLOB_CARRIERS, ["failed_count", "avg_blobs"]),  # a count picked already
    ("How many token transfers did a transaction contain on average yesterday?", ["avg_value_eth"]),  # per one row
    ("How many distinct senders sent transactions yesterday, and how much ETH?", ["total_value_eth"]),  # distinct
    ("How much ETH did transactions move yesterday?", ["total_value_eth"]),  # no count asked
    ("How many blocks had blob gas yesterday, and how much ETH did their transactions pay?", ["total_fees_eth"]),
])
def test_no_count_joins_where_one_is_picked_or_the_question_asks_another(question, measures):
    picked = query("transactions", *measures)
    assert count_when_asked(picked, question, TRANSACTIONS) == picked



NFT, MINT = {"field": "is_nft", "op": "=", "value": True}, {"field": "is_mint", "op": "=", "value": True}
TRANSFERS = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [],
             "window": {"name": "last_n_days", "n": 30}, "filters": [NFT, MINT]}
MINT_SHARE = "What fraction of NFT transfers in the last 30 days were mints?"


def test_the_part_a_share_is_asked_of_is_the_filter_named_last():
    fitted = share_of_part_when_asked(TRANSFERS, MINT_SHARE, MODEL.specs["token_transfers"])
    assert fitted == {**TRANSFERS, "filters": [NFT], "share_where": [MINT]}
    turned = "What fraction of mints in the last 30 days were NFT transfers?"
    assert share_of_part_when_asked(TRANSFERS, turned, MODEL.specs["token_transfers"])["share_where"] == [NFT]


def test_a_value_named_in_the_question_names_its_filter():
    fees = {"model": "transactions", "measures": ["total_fees_eth"], "dimensions": ["day"],
            "filters": [{"field": "status", "op": "=", "value": 1},
                        {"field": "transaction_type", "op": "=", "value": 2}]}
    question = "For each day, what share of the fees of successful transactions came from type 2 transactions?"
    fitted = share_of_part_when_asked(fees, question, TRANSACTIONS)
    assert fitted["share_where"] == [{"field": "transaction_type", "op": "=", "value": 2}]


@pytest.mark.parametrize("change,question", [
    ({}, "How many NFT transfers in the last 30 days were mints?"),  # no share asked
    ({"measures": ["distinct_senders"]}, MINT_SHARE),  # a distinct count is no sum of parts
    ({"measures": ["transfer_count", "avg_amount"]}, MINT_SHARE),
    ({"dimensions": ["token_address"]}, MINT_SHARE),  # a split other than time: a share of the total
    ({"filters": []}, MINT_SHARE),
    ({"filters": [{"field": "token_address", "op": "in", "value": {"step": 1}}]}, MINT_SHARE),
    ({"share_of_total": True}, MINT_SHARE),
])
def test_no_part_share_where_the_query_or_question_asks_another(change, question):
    query = {**TRANSFERS, **change}
    assert share_of_part_when_asked(query, question, MODEL.specs["token_transfers"]) == query


@pytest.mark.parametrize("question,asked", [
    (MINT_SHARE, True),
    ("For each of the last 7 days, what fraction of transactions moved no ETH?", True),
    ("What share of all blocks did each of the top 5 fee recipients produce?", False),
    ("What percentage of transactions in the last 7 days used each transaction type?", False),
    ("What fraction of all ETH held is held by the 10 largest holders?", False),
    ("On average, what fraction of its gas limit did a transaction use yesterday?", False),
    ("How many NFT transfers were mints yesterday?", False),
])
def test_a_share_of_a_part_is_asked_by_time_or_in_all(question, asked):
    assert asks_for_share_of_a_part(question) is asked


BUSIEST_AVERAGE = {"model": "blocks", "measures": ["avg_gas_used"], "dimensions": ["miner"],
                   "window": {"name": "last_n_days", "n": 30},
                   "order_by": [{"field": "avg_gas_used", "direction": "desc"}], "limit": 1}


@pytest.mark.parametrize("bound,op,value", [("at least 20 blocks", ">=", 20), ("more than 1,000 blocks", ">", 1000),
                                            ("fewer than 5 blocks", "<", 5)])
def test_a_bound_on_the_rows_of_a_group_is_their_count_filtered(bound, op, value):
    question = f"Which fee recipient that produced {bound} in the last 30 days had the highest average gas used?"
    fitted = count_threshold_when_asked(BUSIEST_AVERAGE, question, BLOCKS)
    assert fitted == {**BUSIEST_AVERAGE, "measures": ["avg_gas_used", "block_count"],
                      "filters": [{"field": "block_count", "op": op, "value": value}]}
    assert MODEL.compile(fitted).sql  # the layer takes the count it filters on


@pytest.mark.parametrize("change,question", [
    ({}, "Which fee recipient had the highest average gas used over blocks with at least 20 ETH burned?"),  # not rows
    ({"dimensions": []}, "What was the average gas used of at least 20 blocks?"),  # no groups to keep
    ({"filters": [{"field": "block_count", "op": ">", "value": 19}]}, "Which miner with at least 20 blocks?"),
])
def test_no_count_bound_where_no_group_is_bounded_by_its_rows_or_one_is_written(change, question):
    query = {**BUSIEST_AVERAGE, **change}
    assert count_threshold_when_asked(query, question, BLOCKS) == query


TRANSFERS_PER_HASH = {"model": "token_transfers", "measures": ["avg_amount"], "dimensions": ["transaction_hash"],
                      "window": {"name": "last_n_days", "n": 7},
                      "order_by": [{"field": "avg_amount", "direction": "desc"}]}
PER_ONE = "Over the past 7 days, how many token transfers did a transaction that moved tokens contain on average?"


def test_rows_of_one_thing_on_average_are_the_measure_per_that_thing_over_all_of_them():
    fitted = per_one_when_asked(TRANSFERS_PER_HASH, PER_ONE, MODEL.specs["token_transfers"])
    assert fitted == {**TRANSFERS_PER_HASH, "measures": ["transfers_per_transaction"], "dimensions": [],
                      "order_by": []}  # one row: nothing to order


def test_a_measure_per_one_is_named_by_the_last_words_of_its_phrase_the_average_asked_first():
    logs = {"model": "logs", "measures": ["log_count"], "dimensions": ["transaction_hash"],
            "window": {"name": "yesterday"}}
    question = "On average, how many log entries did a transaction emit yesterday?"
    assert per_one_when_asked(logs, question, MODEL.specs["logs"])["measures"] == ["logs_per_transaction"]


@pytest.mark.parametrize("question", [
    "How many token transfers did a transaction contain at most yesterday?",  # no average
    "How many token transfers did each block hold on average yesterday?",  # no measure per block
    "How many transfers were there per transaction?",
])
def test_no_measure_per_one_where_none_is_asked_or_the_model_has_none(question):
    assert per_one_when_asked(TRANSFERS_PER_HASH, question, MODEL.specs["token_transfers"]) == TRANSFERS_PER_HASH


BURNED_MOST = "Which day of the last 7 days burned the most ETH?"


def test_a_share_the_question_never_asks_for_gives_way_to_the_measure_it_names():
    picked = query("transactions", "burned_share_of_fees", dimensions=["day"], limit=1,
                   order_by=[{"field": "burned_share_of_fees", "direction": "desc"}])
    assert share_only_when_asked(picked, BURNED_MOST, TRANSACTIONS) == {
        **picked, "measures": ["burned_eth"], "order_by": [{"field": "burned_eth", "direction": "desc"}]}


@pytest.mark.parametrize("model, measure, question", [
    ("transactions", "burned_share_of_fees", "What fraction of the fees paid yesterday was burned?"),
    ("transactions", "failed_share", "What was the failure rate of transactions yesterday?"),
    ("transactions", "failed_percentage", "What % of transactions failed yesterday?"),
    ("blocks", "avg_fullness", "What was the block utilization yesterday?"),  # the share's own phrase
    ("transactions", "burned_eth", BURNED_MOST),  # no share picked
    ("transactions", "failed_share", "What happened yesterday?"),  # no other measure named: left to doubt
])
def test_a_share_asked_by_any_word_or_named_by_its_own_phrases_is_kept(model, measure, question):
    picked = query(model, measure)
    assert share_only_when_asked(picked, question, MODEL.specs[model]) == picked
