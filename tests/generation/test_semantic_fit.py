"""Each rule fitting a semantic query to its question: a pass case (left as written), a fail case (fitted), and no
verified example of the domain changed by any rule."""

from __future__ import annotations

import json

import pytest

from askchain.domain import get_domain
from askchain.generation.context import SemanticContext
from askchain.generation.semantic import as_picked, fitted_to
from askchain.generation.semantic_fit import (
    RULES, a_series_of_what_was_found, asks_for_days, averaged_per_period_when_asked, compared_with_previous_when_asked,
    each_listed_value_when_asked,
    either_value_of_one_field, every_row_unless_a_count_is_asked, fitted, in_the_window_named, no_value_as_null,
    moving_average_when_asked, one_row_only_when_ranked, percent_when_a_percentage_is_asked, running_total_when_asked,
    series_in_time_order, share_of_total_when_asked, step_questions, together_when_asked,
    total_unless_a_series_is_asked,
    whole_table_unless_a_time_is_named, window_stated, with_the_filters_named,
)
from askchain.semantic import compared_window, named_filters, named_window

PER_DAY = {"model": "transactions", "measures": ["total_value_eth"], "dimensions": ["day"],
           "window": {"name": "last_n_days", "n": 7}, "order_by": [{"field": "day", "direction": "asc"}]}


@pytest.mark.parametrize("question", ["How much ETH was transferred per day over the last 7 days?",
                                      "Total ETH moved on each of the last 7 days", "Daily ETH volume, last week",
                                      "Which day of the last 7 days moved the most ETH?"])
def test_a_series_asked_for_keeps_its_time_split(question):
    assert total_unless_a_series_is_asked(PER_DAY, question) == PER_DAY


@pytest.mark.parametrize("question", [
    "What is the total value of ETH transferred by transactions in the last 7 days?",
    "How much ETH did blob transactions pay in blob fees (blob gas used times blob gas price) in the last 7 days?",
    "How many times did a transaction move more than 100 ETH in the last 7 days?",
    "Which addresses sent more than 5 times in the last 7 days?",
])
def test_a_total_loses_the_time_split_its_question_never_asks_for(question):
    assert total_unless_a_series_is_asked(PER_DAY, question) == {**PER_DAY, "dimensions": [], "order_by": []}


def test_a_ranking_of_periods_keeps_its_time_split_and_a_ranking_of_other_things_does_not():
    top_days = {**PER_DAY, "order_by": [{"field": "total_value_eth", "direction": "desc"}], "limit": 5}
    assert total_unless_a_series_is_asked(top_days, "Top 5 days by ETH moved over the last month") == top_days
    question = "The 5 senders that moved the most ETH in the 30 days before today"
    assert total_unless_a_series_is_asked(top_days, question)["dimensions"] == []  # the days are not what it ranks
    top_senders = {**top_days, "dimensions": ["from_address", "day"]}
    assert total_unless_a_series_is_asked(top_senders, "The 5 senders that moved the most ETH over the last month")[
        "dimensions"] == ["from_address"]


TOP = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["to_address"], "window": None,
       "order_by": [{"field": "transaction_count", "direction": "desc"}], "limit": 10}


@pytest.mark.parametrize("question", ["Which 10 addresses received the most transactions?",
                                      "Which addresses received the most transactions?",
                                      "List ten busy recipients"])
def test_a_count_the_question_gives_or_leaves_to_the_answer_keeps_the_limit(question):
    assert every_row_unless_a_count_is_asked(TOP, question) == TOP


def test_a_limit_the_question_never_asks_for_is_dropped():
    question = "How many transactions did each address that received ETH send?"
    assert every_row_unless_a_count_is_asked(TOP, question)["limit"] is None
    assert every_row_unless_a_count_is_asked({**TOP, "limit": 1}, question)["limit"] == 1  # a superlative's one row


def test_no_verified_example_is_changed():
    """Fitting leaves every verified example's SQL as it was (a rule may add a key that changes nothing there)."""
    domain = get_domain("ethereum")
    model = domain.semantic_model()
    rows = [json.loads(line) for line in domain.semantic_examples_file.read_text().splitlines() if line.strip()]
    changed = [row["id"] for row in rows
               if model.compile(fitted(row["query"], row["question"])).sql != model.compile(row["query"]).sql]
    assert changed == [] and len(RULES) == 9


LOGS = {"model": "logs", "measures": ["log_count"], "dimensions": [], "window": {"name": "yesterday"}}


@pytest.mark.parametrize("question", ["How many logs were emitted yesterday?", "How many logs in the past 24 hours?",
                                      "How many logs since March?"])
def test_a_window_the_question_names_stays(question):
    assert whole_table_unless_a_time_is_named(LOGS, question) == LOGS


def test_a_window_the_question_never_names_is_dropped():
    assert whole_table_unless_a_time_is_named(LOGS, "How many logs are there?")["window"] is None


BLOB_SERIES = {"model": "blocks", "measures": ["total_blob_gas_used"], "dimensions": ["day"],
               "window": {"name": "last_n_days", "n": 7}, "order_by": [{"field": "total_blob_gas_used", "direction": "desc"}]}


def test_a_ranked_series_keeps_its_order():
    assert series_in_time_order(BLOB_SERIES, "Which 3 days of the last 7 used the most blob gas?") == BLOB_SERIES


def test_a_series_is_listed_in_time_order():
    fitted_query = series_in_time_order(BLOB_SERIES, "How much blob gas was used per day over the last 7 days?")
    assert fitted_query["order_by"] == [{"field": "day", "direction": "asc"}]


ONE_TOTAL = {"model": "blocks", "measures": ["total_gas_used"], "dimensions": [], "window": {"name": "yesterday"},
             "order_by": [{"field": "total_gas_used", "direction": "desc"}], "limit": 1}


def test_one_row_of_a_ranking_keeps_its_limit():
    ranked = {**TOP, "limit": 1}
    assert one_row_only_when_ranked(ranked, "Which address received the most transactions?") == ranked


def test_one_aggregate_row_needs_no_limit_nor_order():
    fitted_query = one_row_only_when_ranked(ONE_TOTAL, "How much gas did blocks use yesterday?")
    assert fitted_query["limit"] is None and fitted_query["order_by"] == []


def test_a_series_the_question_does_not_rank_loses_its_limit_of_one():
    series = {**PER_DAY, "limit": 1}
    assert one_row_only_when_ranked(series, "How much ETH was transferred per day over the last 7 days?") == {
        **PER_DAY, "limit": None}


FULLNESS = {"model": "blocks", "measures": ["avg_fullness"], "dimensions": [], "window": {"name": "yesterday"}}


@pytest.mark.parametrize("question", ["How full were blocks yesterday, as a fraction?",
                                      "Average block fullness yesterday (0-1)?", "How full were blocks yesterday?",
                                      "What share of the gas limit did blocks use yesterday, between 0 and 1?"])
def test_a_fraction_stays_a_fraction(question):
    assert percent_when_a_percentage_is_asked(FULLNESS, question) == FULLNESS


@pytest.mark.parametrize("question", ["What was the average block fullness yesterday, as a percentage?",
                                      "How full were blocks yesterday, in percent (0-100)?",
                                      "Block fullness yesterday in %"])
def test_a_percentage_asked_for_is_given_in_percent(question):
    assert percent_when_a_percentage_is_asked(FULLNESS, question)["percent"] is True


FORTNIGHT = {"name": "last_n_days", "n": 14}


@pytest.mark.parametrize("written", [{"name": "last_month"}, {"name": "last_n_days", "n": 28}, None, {"name": "none"}])
def test_the_window_the_question_names_replaces_one_picked_by_habit(written):
    assert in_the_window_named({**LOGS, "window": written}, FORTNIGHT) == {**LOGS, "window": FORTNIGHT}


def test_a_query_filtering_on_time_itself_or_a_question_naming_no_one_period_keeps_its_window():
    since = {**LOGS, "window": None, "filters": [{"field": "block_time", "op": ">=", "value": "2025-03-01"}]}
    assert in_the_window_named(since, FORTNIGHT) == since
    assert in_the_window_named(LOGS, None) == LOGS


@pytest.mark.parametrize("window, stated", [
    ({"name": "last_n_days", "n": 30}, True), ({"name": "last_n_days", "n": 7}, True),  # "seven"
    ({"name": "yesterday"}, False), ({"name": "last_n_days", "n": 14}, False), ({"name": "last_n_weeks", "n": 1}, True),
    ({"name": "this_week"}, True), (None, True), ({"name": "none"}, True),
    ({"name": "last_n_days", "n": "many"}, True),  # malformed: the layer rejects it
])
def test_a_window_is_stated_by_its_length_or_its_name(window, stated):
    question = ("Which address sent the most in the last 30 days, and what did it send on each of the seven days to "
                "this week?")
    assert window_stated(window, question) is stated


def test_no_verified_example_is_changed_by_the_window_and_filters_its_words_name():
    """The window and the governed filters a verified example's question names are those its query has already, and
    it names every true/false filter its query has."""
    domain = get_domain("ethereum")
    model, layer = domain.semantic_model(), domain.semantic_layer()
    rows = [json.loads(line) for line in domain.semantic_examples_file.read_text().splitlines() if line.strip()]
    changed = []
    for row in rows:
        readings = layer.match(row["question"])
        context = SemanticContext(model, window=named_window(readings), compared=compared_window(readings),
                                  filters=named_filters(readings))
        query = fitted_to(context, as_picked(row["query"]), row["question"])
        if query != row["query"] and model.compile(query).sql != model.compile(row["query"]).sql:
            changed.append(row["id"])
    assert changed == []


TRANSACTIONS = get_domain("ethereum").semantic_model().specs["transactions"]
SUCCESSFUL, FAILED = {"field": "status", "op": "=", "value": 1}, {"field": "status", "op": "=", "value": 0}
ETH_MOVED = {"model": "transactions", "measures": ["total_value_eth"], "dimensions": [], "window": {"name": "yesterday"}}


def test_a_governed_filter_the_question_names_is_added():
    assert with_the_filters_named(ETH_MOVED, (SUCCESSFUL,), TRANSACTIONS) == {**ETH_MOVED, "filters": [SUCCESSFUL]}


@pytest.mark.parametrize("query", [
    {**ETH_MOVED, "filters": [{"field": "status", "op": "!=", "value": 0}]},  # filtered already
    {**ETH_MOVED, "dimensions": ["status"]},  # set against each other
    {**ETH_MOVED, "measures": ["failed_share"]},  # the measure reads the status itself
    {**ETH_MOVED, "measures": ["failed_count", "total_value_eth"]},
])
def test_a_query_reading_the_filtered_dimension_already_is_left_as_written(query):
    assert with_the_filters_named(query, (FAILED,), TRANSACTIONS) == query


def test_a_filter_on_a_dimension_the_model_lacks_is_not_added():
    transfers = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [], "window": None}
    spec = get_domain("ethereum").semantic_model().specs["token_transfers"]
    assert with_the_filters_named(transfers, (SUCCESSFUL,), spec) == transfers


TRACES = get_domain("ethereum").semantic_model().specs["traces"]
TOP_LEVEL = {"field": "is_internal", "op": "=", "value": False}


@pytest.mark.parametrize("measure, filtered", [
    ("failed_share", True),  # the share of top-level calls that failed
    ("top_level_share", False),  # the measure reads trace_address, the column the dimension is made of
])
def test_a_filter_on_a_derived_dimension_is_added_unless_a_measure_reads_its_column(measure, filtered):
    query = {"model": "traces", "measures": [measure], "dimensions": [], "window": None}
    assert (with_the_filters_named(query, (TOP_LEVEL,), TRACES) != query) is filtered


@pytest.mark.parametrize("question, named", [
    ("What share of top-level traces failed yesterday?", {"field": "is_internal", "op": "=", "value": False}),
    ("Which addresses deployed the most contracts directly yesterday?",
     {"field": "is_contract_creation", "op": "=", "value": True}),
    ("Which 10 contracts received the most ETH last week?", {"field": "to_is_contract", "op": "=", "value": True}),
    ("Which contract received the most transactions yesterday?", {"field": "to_is_contract", "op": "=", "value": True}),
])
def test_the_layer_names_the_governed_filter_of_a_questions_words(question, named):
    assert named in named_filters(get_domain("ethereum").semantic_layer().match(question))


TOKENS = {"model": "tokens", "measures": ["token_count"], "dimensions": [], "window": None}


@pytest.mark.parametrize("written, meant", [
    ({"field": "symbol", "op": "=", "value": "null"}, {"field": "symbol", "op": "is null"}),
    ({"field": "symbol", "op": "=", "value": None}, {"field": "symbol", "op": "is null"}),
    ({"field": "name", "op": "!=", "value": "NULL"}, {"field": "name", "op": "is not null"}),
])
def test_the_word_null_as_a_value_is_a_test_for_no_value(written, meant):
    assert no_value_as_null({**TOKENS, "filters": [written]}, "") == {**TOKENS, "filters": [meant]}


def test_a_real_value_or_a_test_for_none_stays():
    written = {**TOKENS, "filters": [{"field": "symbol", "op": "=", "value": "USDC"},
                                     {"field": "name", "op": "is null"}]}
    assert no_value_as_null(written, "") == written


def test_two_values_of_one_field_no_row_has_at_once_are_either():
    written = {**ETH_MOVED, "filters": [{"field": "transaction_type", "op": "=", "value": 0}, SUCCESSFUL,
                                        {"field": "transaction_type", "op": "=", "value": 2}]}
    assert either_value_of_one_field(written, "") == {
        **ETH_MOVED, "filters": [SUCCESSFUL, {"field": "transaction_type", "op": "in", "value": [0, 2]}]}


def test_one_value_of_each_field_stays():
    written = {**ETH_MOVED, "filters": [{"field": "transaction_type", "op": "=", "value": 2}, SUCCESSFUL,
                                        {"field": "transaction_type", "op": "=", "value": 2}]}
    assert either_value_of_one_field(written, "") == written


@pytest.mark.parametrize("question, periods", [
    ("Give the daily count of blocks and its 7-day moving average over the last 30 days.", 7),
    ("Daily blocks over the last 60 days with a rolling 14-day average.", 14),
    ("Blocks per day over the last 30 days, and the moving average (5 days)?", None),
    ("Blocks per day over the last 30 days.", None)])
def test_a_moving_average_of_the_length_asked(question, periods):
    daily = {"model": "blocks", "measures": ["block_count"], "dimensions": ["day"],
             "window": {"name": "last_n_days", "n": 30}}
    fitted_query = moving_average_when_asked(daily, question, get_domain("ethereum").semantic_model().specs["blocks"])
    assert fitted_query.get("moving_average") == periods


TWO_TYPES = {**ETH_MOVED, "filters": [{"field": "transaction_type", "op": "in", "value": [0, 2]}]}


@pytest.mark.parametrize("question", [
    "What was the average value sent by type 0 and by type 2 transactions last week, of each?",
    "Compare the ETH moved by type 0 and type 2 transactions yesterday.",
    "How much ETH did type 1 and type 2 transactions move yesterday, respectively?"])
def test_a_figure_of_each_listed_value_is_a_row_per_value(question):
    assert each_listed_value_when_asked(TWO_TYPES, question) == {**TWO_TYPES, "dimensions": ["transaction_type"]}


@pytest.mark.parametrize("query, question", [
    (TWO_TYPES, "How much ETH did type 0 and type 2 transactions move yesterday altogether?"),
    ({**TWO_TYPES, "dimensions": ["from_address"]}, "How much ETH did each sender move in type 0 or 2 transactions?"),
    ({**ETH_MOVED, "filters": [{"field": "transaction_type", "op": "in", "value": [2]}]}, "ETH moved by each type 2 one?"),
])
def test_one_figure_over_the_listed_values_stays(query, question):
    assert each_listed_value_when_asked(query, question) == query


DAILY = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"],
         "window": {"name": "last_n_days", "n": 7}}


@pytest.mark.parametrize("question", ["Running total of transactions day by day over the last 7 days.",
                                      "Cumulative number of transactions through each of the last 7 days"])
def test_a_running_total_asked_of_a_series_is_given(question):
    assert running_total_when_asked(DAILY, question, TRANSACTIONS) == {**DAILY, "running_total": True}


@pytest.mark.parametrize("query, question", [
    (DAILY, "How many transactions were there per day over the last 7 days?"),  # not asked
    ({**DAILY, "dimensions": ["transaction_type"]}, "Cumulative transactions by type"),  # nothing to run over
])
def test_no_running_total_unless_asked_of_a_series_over_time(query, question):
    assert running_total_when_asked(query, question, TRANSACTIONS) == query


@pytest.mark.parametrize("question, grain", [
    ("What was the average number of transactions per hour over the three days before today?", "hour"),
    ("Average daily transaction count over the last 7 days", "day"),
    ("How many transactions were sent per day on average over the last 7 days?", "day"),
    ("How many transactions does an average week hold?", "week"),
])
def test_an_average_per_period_asked_of_a_count_averages_it_over_the_periods(question, grain):
    assert averaged_per_period_when_asked({**DAILY, "dimensions": []}, question, TRANSACTIONS) == {
        **DAILY, "dimensions": [], "order_by": [], "average_per": grain}


def test_the_period_averaged_over_is_no_split_and_another_period_stays():
    hourly = {**DAILY, "dimensions": ["day", "hour_of_day"], "order_by": [{"field": "day", "direction": "asc"},
                                                                          {"field": "hour_of_day", "direction": "asc"}]}
    question = "For each of the last 7 days, what was the average number of transactions per hour?"
    assert averaged_per_period_when_asked(hourly, question, TRANSACTIONS) == {
        **hourly, "dimensions": ["day"], "order_by": [{"field": "day", "direction": "asc"}], "average_per": "hour"}


@pytest.mark.parametrize("query, question", [
    (DAILY, "How many transactions were there per day over the last 7 days?"),  # a series, no average
    (DAILY, "What was the average number of transactions per day for each day of the last week?"),  # each day
    (DAILY, "What is the average number of transactions per block per day?"),  # averaged per block
    ({**DAILY, "measures": ["avg_gas_price_gwei"]}, "What was the average gas price per day last week?"),  # a mean
    ({**DAILY, "measures": ["failed_share"]}, "Average daily failure rate over the last 7 days"),  # a ratio
    ({**DAILY, "running_total": True}, "Cumulative average daily transactions"),  # a running total
])
def test_no_average_per_period_unless_asked_of_a_sum_or_count(query, question):
    assert averaged_per_period_when_asked(query, question, TRANSACTIONS) == query


def test_a_mean_nobody_named_gives_way_to_the_count_the_average_is_asked_of():
    """"Average" draws the model to a mean; the question names what it averages per hour: the transactions."""
    picked = {**DAILY, "measures": ["avg_gas_price_gwei"], "dimensions": [], "order_by": [
        {"field": "avg_gas_price_gwei", "direction": "desc"}]}
    question = "What was the average number of transactions per hour over the three days before today?"
    assert averaged_per_period_when_asked(picked, question, TRANSACTIONS) == {
        **picked, "measures": ["transaction_count"], "order_by": [], "average_per": "hour"}


BY_TYPE = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["transaction_type"],
           "window": {"name": "last_n_days", "n": 14}}


@pytest.mark.parametrize("query, question", [
    (BY_TYPE, "Give the percentage of transactions per transaction type over the last two weeks."),
    ({**BY_TYPE, "measures": ["total_fees_eth"]}, "What share of all fees paid in the last 14 days came from each type?"),
    ({**BY_TYPE, "limit": 2}, "Which 2 transaction types make up the largest % of transactions, and how much?"),
    ({**BY_TYPE, "limit": 3}, "For the 3 busiest types, what percentage (0-100) of the fortnight's transactions did each carry?"),
])
def test_a_share_asked_of_a_count_by_a_dimension_is_each_rows_share_of_the_total(query, question):
    assert share_of_total_when_asked(query, question, TRANSACTIONS) == {**query, "share_of_total": True}


def test_a_mean_beside_the_count_a_share_is_asked_of_goes_and_its_order_ranks_by_the_count():
    picked = {**BY_TYPE, "measures": ["transaction_count", "avg_gas_price_gwei", "max_fee_eth"], "limit": 2,
              "order_by": [{"field": "avg_gas_price_gwei", "direction": "desc"},
                           {"field": "transaction_count", "direction": "desc"}]}
    question = "Which 2 transaction types carried the largest share of the fortnight's transactions?"
    assert share_of_total_when_asked(picked, question, TRANSACTIONS) == {
        **picked, "measures": ["transaction_count"], "order_by": [{"field": "transaction_count", "direction": "desc"}],
        "share_of_total": True}


@pytest.mark.parametrize("query, question", [
    (BY_TYPE, "How many transactions of each type were sent over the last 14 days?"),  # no share asked
    ({**BY_TYPE, "measures": ["failed_share"]}, "What share of each type's transactions failed?"),  # its own share
    ({**BY_TYPE, "measures": ["failed_share", "transaction_count"]}, "What share of each type's transactions failed, "
     "of how many?"),  # a share beside the count: the share may be what is asked
    ({**BY_TYPE, "measures": ["distinct_senders"]}, "What share of senders used each type?"),  # a sender in two types
    ({**BY_TYPE, "dimensions": ["day"]}, "What share of transactions failed on each day?"),  # each day's own
    ({**BY_TYPE, "dimensions": [], "measures": ["plain_transfer_count"]},
     "What percentage of transactions were plain ETH transfers?"),  # nothing to share among
])
def test_no_share_of_the_total_unless_asked_of_what_adds_up_over_a_split(query, question):
    assert share_of_total_when_asked(query, question, TRANSACTIONS) == query


def test_a_mean_the_question_names_stays():
    picked = {**DAILY, "measures": ["avg_gas_price_gwei"], "dimensions": []}
    question = "What was the average gas price per hour of transactions over the last 3 days?"
    assert averaged_per_period_when_asked(picked, question, TRANSACTIONS) == picked


TOP_RECEIVER = {"model": "withdrawals", "measures": ["withdrawn_eth"], "dimensions": ["address"],
                "window": {"name": "last_n_days", "n": 30},
                "order_by": [{"field": "withdrawn_eth", "direction": "desc"}], "limit": 1}
ITS_TOTAL = {"model": "withdrawals", "measures": ["withdrawn_eth"], "dimensions": ["address"],
             "window": {"name": "last_n_days", "n": 7},
             "filters": [{"field": "address", "op": "in", "value": {"step": 1}}]}


@pytest.mark.parametrize("question, days", [
    ("How much did it receive on each of the last 7 days?", True), ("Its daily totals this month?", True),
    ("How much per day?", True), ("Day by day, how much?", True), ("How much every single day?", True),
    ("How much on each day of the week?", False), ("How much in each of the last 4 weeks?", False),
    ("How much over the last 7 days?", False)])
def test_the_words_that_ask_for_days(question, days):
    assert asks_for_days(question) is days


def test_the_days_of_what_a_plan_found_are_a_series_by_day():
    """Grouped only by the one address step 1 found, step 2 is one row; the question asks for its days."""
    question = ("Which address received the most ETH from withdrawals in the last 30 days, and how much did it "
                "receive on each of the last 7 days?")
    fitted_plan = a_series_of_what_was_found({"steps": [TOP_RECEIVER, ITS_TOTAL]}, question)
    assert fitted_plan["steps"][0] == TOP_RECEIVER
    assert fitted_plan["steps"][1] == {**ITS_TOTAL, "dimensions": ["day"], "limit": None,
                                       "order_by": [{"field": "day", "direction": "asc"}]}


@pytest.mark.parametrize("steps, question", [
    ((TOP_RECEIVER, ITS_TOTAL), "Which address received the most ETH from withdrawals in the last 30 days, and how "
                                "much did it receive in the last 7 days?"),  # no days asked
    ((TOP_RECEIVER, {**ITS_TOTAL, "dimensions": ["day"]}), "... and how much did it receive each day?"),  # split
    (({**TOP_RECEIVER, "limit": 3}, ITS_TOTAL), "For the 3 top receivers, how much did each receive per day?"),
    ((TOP_RECEIVER, {**ITS_TOTAL, "dimensions": ["validator_index"]}), "... per day"),  # a split of its own
    ((TOP_RECEIVER, {**ITS_TOTAL, "filters": [{"field": "address", "op": "in", "value": {"step": "1"}}]}),
     "... per day"),  # no step number: left for the layer to refuse
])
def test_a_plan_split_otherwise_or_asked_no_days_is_kept(steps, question):
    assert a_series_of_what_was_found({"steps": list(steps)}, question) == {"steps": list(steps)}


#: The 5 top withdrawal receivers of the last 30 days; ITS_TOTAL then takes their ETH of the last 7 days, grouped by
#: receiver as the model wrote it.
TOP_RECEIVERS = {**TOP_RECEIVER, "limit": 5}


def test_a_plan_asked_for_the_found_rows_together_answers_with_their_total():
    question = ("How much ETH did the 5 top withdrawal receivers of the last 30 days receive together in the last 7 "
                "days?")
    fitted_plan = together_when_asked({"steps": [TOP_RECEIVERS, ITS_TOTAL]}, question)
    assert fitted_plan == {"steps": [TOP_RECEIVERS, {**ITS_TOTAL, "dimensions": []}], "each": False}


@pytest.mark.parametrize("question", [
    "How much ETH did the 5 top withdrawal receivers receive in the last 7 days?",  # neither: for each (the default)
    "How much ETH did each of the 5 top withdrawal receivers receive in total in the last 7 days?",  # each wins
])
def test_a_plan_not_asked_for_a_total_of_the_found_rows_is_kept(question):
    plan = {"steps": [TOP_RECEIVERS, ITS_TOTAL]}
    assert together_when_asked(plan, question) == plan


MINTS = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [],
         "window": {"name": "last_n_days", "n": 14}, "filters": [{"field": "is_mint", "op": "=", "value": True}]}
LAST_7 = {"name": "last_n_days", "n": 7}


WINDOWS = get_domain("ethereum").semantic_model().windows


@pytest.mark.parametrize("question, shape", [
    ("How many mints in the last 7 days compared with the 7 days before?", "rows"),
    ("Mints in the last 7 days versus the previous 7 days, for each of the two periods", "rows"),
    ("How many mints in the last 7 days compared with the 7 days before, and what is the percentage change?",
     "columns"),
    ("Did mints grow in the last 7 days over the 7 days before?", "columns"),
])
def test_a_period_set_against_the_one_before_is_compared_with_it(question, shape):
    fitted_query = compared_with_previous_when_asked(MINTS, question, LAST_7, WINDOWS)
    assert fitted_query == {**MINTS, "window": LAST_7, "compared_with_previous": shape}


def test_a_split_by_day_asked_only_by_the_comparison_goes():
    daily = {**MINTS, "dimensions": ["day"], "order_by": [{"field": "day", "direction": "asc"}]}
    question = "How many mints in the last 7 days compared with the 7 days before, in each of the two periods?"
    assert compared_with_previous_when_asked(daily, question, LAST_7, WINDOWS) == \
        {**MINTS, "order_by": [], "window": LAST_7, "compared_with_previous": "rows"}


@pytest.mark.parametrize("question, window, query", [
    ("How many mints in the last 7 days?", LAST_7, MINTS),  # one period
    ("How many mints in the 7 days before today?", LAST_7, MINTS),  # one window, phrased from today
    ("Mints yesterday and on the same weekday a week before", {"name": "yesterday"}, MINTS),  # one day 8 days ago
    ("Mints per day, last 7 days compared with the 7 days before", LAST_7, {**MINTS, "dimensions": ["day"]}),
    ("Mints in the last 2 weeks compared with the week before", {"name": "last_n_weeks", "n": 2},
     {**MINTS, "dimensions": ["week"]}),  # a row per week of the window shows both already
    ("How many mints today compared with the day before?", {"name": "today"}, MINTS),  # no period before today
])
def test_a_query_is_compared_only_with_the_period_of_the_same_length_before_it(question, window, query):
    assert compared_with_previous_when_asked(query, question, window, WINDOWS) == query


USDC_RECEIVERS = {"model": "token_transfers", "measures": ["total_amount"], "dimensions": ["to_address"],
                  "window": {"name": "last_n_days", "n": 30}}
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"


def test_a_well_known_token_the_question_names_is_a_filter_unless_written_by_another_field():
    layer = get_domain("ethereum").semantic_layer()
    (named,) = named_filters(layer.match("Which address received the most USDC in the last 30 days?"))
    assert named == {"field": "token_symbol", "op": "=", "value": "USDC"}
    spec = get_domain("ethereum").semantic_model().specs["token_transfers"]
    assert with_the_filters_named(USDC_RECEIVERS, (named,), spec)["filters"] == [named]
    by_address = {**USDC_RECEIVERS, "filters": [{"field": "token_address", "op": "=", "value": USDC.upper()}]}
    assert with_the_filters_named(by_address, (named,), spec) == by_address


def test_a_grouping_by_the_named_entitys_field_labels_it_and_takes_its_filter():
    spec = get_domain("ethereum").semantic_model().specs["token_transfers"]
    named = {"field": "token_symbol", "op": "=", "value": "PPG"}
    grouped = {**USDC_RECEIVERS, "dimensions": ["token_symbol"]}
    assert with_the_filters_named(grouped, (named,), spec)["filters"] == [named]
    by_status = {**ETH_MOVED, "dimensions": ["status"]}  # a status split sets the statuses against each other
    assert with_the_filters_named(by_status, (SUCCESSFUL,), TRANSACTIONS) == by_status


TOP_DAY = {"model": "transactions", "measures": ["burned_eth"], "dimensions": ["day"], "limit": 1,
           "order_by": [{"field": "burned_eth", "direction": "desc"}]}
THAT_DAY = {"model": "transactions", "measures": ["burned_share_of_fees"], "dimensions": ["day"],
            "filters": [{"field": "day", "op": "in", "value": {"step": 1}}]}


@pytest.mark.parametrize("question, first, rest", [
    ("Which day of the last 7 days burned the most ETH, and what fraction of its fees was burned?",
     "Which day of the last 7 days burned the most ETH", "what fraction of its fees was burned?"),
    ("For the 3 days with the most burn in the last 30 days, how much was tipped?",
     "For the 3 days with the most burn in the last 30 days", "how much was tipped?"),
    ("Of the tokens with 6 decimals, which day had the most burn, and in that period how much was tipped?",
     "Of the tokens with 6 decimals, which day had the most burn", "how much was tipped?"),  # the clause that ranks
    ("Which 2 days burned the most, and for each, how much was tipped?", "Which 2 days burned the most",
     "how much was tipped?"),
])
def test_a_plan_ranking_first_answers_its_first_clause_then_the_rest(question, first, rest):
    assert step_questions({"steps": [TOP_DAY, THAT_DAY]}, question) == {1: first, 2: rest}


@pytest.mark.parametrize("plan, question", [
    ({"steps": [{**TOP_DAY, "limit": None}, THAT_DAY]}, "Which day burned most, and how much was tipped?"),  # no top
    ({"steps": [TOP_DAY, {**THAT_DAY, "filters": []}]}, "Which day burned most, and how much was tipped?"),  # unlinked
    ({"steps": [TOP_DAY, THAT_DAY]}, "How much was burned and tipped on the day with the most burn?"),  # one clause
    ({"steps": "two"}, "Which day burned most, and how much was tipped?"),  # malformed: the layer says why
])
def test_other_plans_answer_the_whole_question_with_every_step(plan, question):
    assert step_questions(plan, question) == {}
