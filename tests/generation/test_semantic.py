"""The semantic generator over the Ethereum domain's governed model, with a scripted model: what it asks, how a
reply becomes a candidate, and when a question goes on to free SQL."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from askchain.config import get_settings
from askchain.domain import get_domain
from askchain.generation.context import GenerationContext, SemanticContext, SemanticExample
from askchain.generation.semantic import (
    QuestionFit, compile_reply, load_examples, nearest_examples, normalised, reply_schema, semantic)
from askchain.llm.fake import ScriptedModel

FAILED_SHARE = {"model": "transactions", "measures": ["failed_share"], "dimensions": [],
                "window": {"name": "last_n_days", "n": 7}}


@pytest.fixture(scope="module")
def model():
    return get_domain("ethereum").semantic_model()


@pytest.fixture
def cfg():
    return get_settings().pipeline.generators["semantic"]


def context(model, examples=()) -> GenerationContext:
    return GenerationContext("What share of transactions failed in the last 7 days?", "bigquery", "GoogleSQL", "",
                             semantic=SemanticContext(model, list(examples)))


def test_a_query_becomes_a_candidate_with_its_sql_reading_and_weight(model, cfg):
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE)})
    (candidate,) = semantic(context(model), scripted, cfg, 1, None)
    assert candidate.generator == "semantic" and candidate.votes == cfg.options["weight"]
    assert "COUNTIF(receipt_status = 0)" in candidate.sql and "INTERVAL 7 DAY" in candidate.sql
    assert candidate.reading.startswith("failed share of transactions, a fraction")
    assert "the 7 full UTC days before today" in candidate.reading
    (request,) = scripted.requests
    assert json.loads(request.json_schema) == reply_schema(model)  # decoded under the model's own names


def test_the_schema_admits_only_existing_names_and_the_hand_over_to_sql(model):
    schema = reply_schema(model)
    assert {"needs_sql"} in [set(option.get("properties", {})) for option in schema["anyOf"]]
    transactions = next(o for o in schema["anyOf"] if o["properties"].get("model", {}).get("const") == "transactions")
    assert "failed_share" in transactions["properties"]["measures"]["items"]["enum"]
    assert list(transactions["properties"])[:2] == ["model", "measures"]  # the order a query is written in


def test_a_rejected_query_is_asked_again_with_the_layers_reason(model, cfg):
    wrong = {**FAILED_SHARE, "window": {"name": "last_n_days"}}  # the window's n left out
    scripted = ScriptedModel([json.dumps(wrong), json.dumps(FAILED_SHARE)])
    (candidate,) = semantic(context(model), scripted, cfg, 1, None)
    assert "INTERVAL 7 DAY" in candidate.sql
    revision = scripted.requests[1].messages[-1][1]
    assert "rejected" in revision and "last_n_days" in revision


def test_a_question_that_needs_sql_or_a_query_never_fixed_gives_no_candidate(model, cfg):
    assert semantic(context(model), ScriptedModel(['{"needs_sql": true}']), cfg, 1, None) == []
    broken = json.dumps({**FAILED_SHARE, "measures": ["no_such_measure"]})
    assert semantic(context(model), ScriptedModel(lambda request, i: broken), cfg, 1, None) == []


def test_no_context_no_call(cfg):
    scripted = ScriptedModel([])
    assert semantic(GenerationContext("q", "sqlite", "SQLite", ""), scripted, cfg, 1, None) == []
    assert scripted.requests == []


def test_names_repeated_and_orders_by_unselected_fields_are_dropped():
    reply = {**FAILED_SHARE, "measures": ["failed_share", "failed_share"],
             "order_by": [{"field": "day", "direction": "asc"}, {"field": "failed_share", "direction": "desc"}]}
    assert normalised(reply) == {**FAILED_SHARE, "order_by": [{"field": "failed_share", "direction": "desc"}]}


def test_examples_are_the_verified_pool_queries_and_other_pool_questions_hand_over_to_sql():
    domain = get_domain("ethereum")
    examples = load_examples(domain.semantic_examples_file, domain.example_files)
    bank = [json.loads(line) for path in domain.example_files for line in path.read_text().splitlines() if line.strip()]
    pool = {row["question"] for row in bank if row["split"] == "pool"}
    assert {e.question for e in examples} == pool  # never a dev or test question
    handed_over = [e for e in examples if e.query == {"needs_sql": True}]
    assert 0 < len(handed_over) < len(examples) / 2


def test_the_nearest_examples_leave_the_question_itself_out():
    examples = [SemanticExample("How many blocks were produced yesterday?", {"needs_sql": True}),
                SemanticExample("What share of transactions failed yesterday?", FAILED_SHARE),
                SemanticExample("Which token had the most holders?", {"needs_sql": True})]
    shown = nearest_examples("How many blocks were produced yesterday?", examples, 2)
    assert [e.question for e in shown][0] == "What share of transactions failed yesterday?"
    assert len(shown) == 2 and examples[0] not in shown


def test_the_names_a_question_writes_are_offered_longest_phrase_first(model):
    from askchain.generation.semantic import matching_names

    offered = matching_names(model, "What was the average gas price in gwei yesterday?", 3)
    assert offered[0].startswith("transactions.avg_gas_price_gwei (gwei): ")
    per_day = matching_names(model, "How much ETH was burned per day over the last 30 days?", 6)
    assert [line.split(" ")[0] for line in per_day] == ["blocks.eth_burned", "transactions.burned_eth"]  # no grains
    assert matching_names(model, "Hello there", 6) == []


def test_the_prompt_shows_the_matching_names_before_the_question(model, cfg):
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE)})
    ctx = context(model)
    ctx.semantic.matching = ["transactions.failed_count: failed transactions"]
    semantic(ctx, scripted, cfg, 1, None)
    prompt = scripted.requests[0].messages[-1][1]
    assert prompt.index("Names the question's words match:") < prompt.index("Question: What share")


def test_the_doubt_judges_the_query_as_compiled_not_as_written(model, cfg):
    """An extra measure the question never names is dropped before compiling, so it leaves no doubt behind."""
    written = {**FAILED_SHARE, "measures": ["failed_share", "avg_value_eth"]}
    (candidate,) = semantic(context(model), ScriptedModel({"semantic": json.dumps(written)}), cfg, 1, None)
    assert candidate.doubt == "" and candidate.votes == cfg.options["weight"]
    assert "value" not in candidate.sql


def test_an_example_is_shown_as_the_model_picks_it_and_its_question_fits_the_rest(model, cfg):
    """A running total is set from the question's words, never picked: the example shows none, and the candidate of
    a question asking for one has it."""
    series = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"],
              "window": {"name": "last_n_days", "n": 7}}
    scripted = ScriptedModel({"semantic": json.dumps(series)})
    ctx = GenerationContext("Cumulative transactions day by day over the last 7 days", "bigquery", "GoogleSQL", "",
                            semantic=SemanticContext(model, [SemanticExample(
                                "Running total of blocks per day last week", {**series, "running_total": True})]))
    (candidate,) = semantic(ctx, scripted, cfg, 1, None)
    assert "running_total" not in scripted.requests[0].messages[-1][1]
    assert "transaction_count_running_total" in candidate.sql


TOP_SENDERS = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["from_address"],
               "window": {"name": "yesterday"}, "order_by": [{"field": "transaction_count", "direction": "desc"}],
               "limit": 5}
THEIR_TRANSFERS = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [],
                   "window": {"name": "yesterday"},
                   "filters": [{"field": "from_address", "op": "=", "value": {"step": 1}}]}
TOP_SENDERS_QUESTION = ("For the 5 addresses that sent the most transactions yesterday, how many token transfers did "
                        "each send that day?")


def test_where_the_question_may_need_steps_a_plan_becomes_one_candidate(model, cfg):
    scripted = ScriptedModel({"semantic": json.dumps({"steps": [TOP_SENDERS, THEIR_TRANSFERS]})})
    ctx = GenerationContext(TOP_SENDERS_QUESTION, "bigquery", "GoogleSQL", "",
                            semantic=SemanticContext(model, plans=True))
    (candidate,) = semantic(ctx, scripted, cfg, 1, None)
    assert "WITH step_1 AS" in candidate.sql and "ON step_2.from_address = step_1.from_address" in candidate.sql
    assert candidate.reading.startswith("step 1: number of transactions") and "then step 2" in candidate.reading
    (request,) = scripted.requests
    assert json.loads(request.json_schema) == reply_schema(model, plans=True)
    assert request.max_tokens == 3 * cfg.max_tokens  # a plan writes up to three queries
    assert '{"steps": [query, query]}' in request.messages[-1][1]


def test_elsewhere_the_grammar_admits_no_plan_and_the_prompt_shows_none(model, cfg):
    schema = reply_schema(model)
    assert not any("steps" in option.get("properties", {}) for option in schema["anyOf"])
    assert any("steps" in option.get("properties", {}) for option in reply_schema(model, plans=True)["anyOf"])
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE)})
    semantic(context(model), scripted, cfg, 1, None)
    assert '"steps"' not in scripted.requests[0].messages[-1][1]


def test_plans_are_shown_last_and_only_where_a_plan_may_be_the_reply():
    from askchain.generation.semantic import examples_for

    plan = SemanticExample("For the 3 busiest senders yesterday, how many token transfers did each send?",
                           {"steps": [TOP_SENDERS, THEIR_TRANSFERS]})
    single = [SemanticExample("Which 5 addresses sent the most transactions yesterday?", TOP_SENDERS),
              SemanticExample("What share of transactions failed yesterday?", FAILED_SHARE)]
    assert plan not in examples_for(TOP_SENDERS_QUESTION, [plan, *single], 2, plans=False)
    shown = examples_for(TOP_SENDERS_QUESTION, [plan, *single], 2, plans=True)
    assert shown[-1] == plan and len(shown) == 2


def test_a_plan_in_two_windows_keeps_them_and_one_in_one_window_takes_the_named_one(model, cfg):
    """"The top receiver of 30 days, then each of its last 7 days" names two periods: the steps keep their own
    windows. Steps sharing a window the model picked by habit take the one the question names, and so does a step
    whose window the question never states."""
    top = {"model": "withdrawals", "measures": ["withdrawn_eth"], "dimensions": ["address"],
           "window": {"name": "last_n_days", "n": 30},
           "order_by": [{"field": "withdrawn_eth", "direction": "desc"}], "limit": 1}
    daily = {"model": "withdrawals", "measures": ["withdrawn_eth"], "dimensions": ["day"],
             "window": {"name": "last_n_days", "n": 7},
             "filters": [{"field": "address", "op": "in", "value": {"step": 1}}]}
    named = {"name": "last_n_days", "n": 30}
    question = ("Which address withdrew the most ETH in the last 30 days, and how much did it withdraw on each of the "
                "last 7 days?")
    ctx = GenerationContext(question, "bigquery", "GoogleSQL", "",
                            semantic=SemanticContext(model, plans=True, window=named))
    (two,) = semantic(ctx, ScriptedModel({"semantic": json.dumps({"steps": [top, daily]})}), cfg, 1, None)
    assert "INTERVAL 30 DAY" in two.sql and "INTERVAL 7 DAY" in two.sql
    habit = {"steps": [{**step, "window": {"name": "last_n_days", "n": 28}} for step in (top, daily)]}
    (one,) = semantic(ctx, ScriptedModel({"semantic": json.dumps(habit)}), cfg, 1, None)
    assert "INTERVAL 28 DAY" not in one.sql and one.sql.count("INTERVAL 30 DAY") == 2
    unstated = {"steps": [{**top, "window": {"name": "yesterday"}}, daily]}  # the question never says yesterday
    (stated,) = semantic(ctx, ScriptedModel({"semantic": json.dumps(unstated)}), cfg, 1, None)
    assert "INTERVAL 1 DAY" not in stated.sql and "INTERVAL 30 DAY" in stated.sql and "INTERVAL 7 DAY" in stated.sql


def test_a_plan_that_never_compiles_gives_way_to_one_query(model, cfg):
    """A step that takes the values of a step not before it cannot be joined; asked again without a plan, the model
    writes the one query that answers."""
    by_day = {"model": "contracts", "measures": ["contract_count"], "dimensions": ["day"],
              "window": {"name": "last_n_days", "n": 7}}
    unjoinable = json.dumps({"steps": [by_day, {**by_day, "measures": ["erc721_count"], "filters": [
        {"field": "day", "op": "in", "value": {"step": 2}}]}]})
    one = json.dumps({**by_day, "measures": ["contract_count", "erc721_count"]})
    scripted = ScriptedModel([unjoinable, unjoinable, one])
    plan_example = SemanticExample("For the 3 busiest senders yesterday, how many token transfers did each send?",
                                   {"steps": [TOP_SENDERS, THEIR_TRANSFERS]})
    ctx = GenerationContext("For each of the last 7 days, how many contracts were created and how many of them were "
                            "NFT contracts?", "bigquery", "GoogleSQL", "",
                            semantic=SemanticContext(model, [plan_example], plans=True))
    (candidate,) = semantic(ctx, scripted, cfg, 1, None)
    assert "COUNTIF(is_erc721)" in candidate.sql and "step_1" not in candidate.sql
    last = scripted.requests[-1]
    assert json.loads(last.json_schema) == reply_schema(model) and '"steps"' not in last.messages[-1][1]
    assert semantic(ctx, ScriptedModel(['{"needs_sql": true}']), cfg, 1, None) == []  # no plan failed: no retry


def test_a_question_asking_the_share_of_a_part_is_told_how_to_write_it_and_the_part_becomes_the_share(model, cfg):
    """The rule is shown only where a share of a part is asked; the count filtered to the part the model writes
    compiles to the part's share of the whole."""
    zero_value = {"model": "transactions", "measures": ["transaction_count"], "dimensions": [],
                  "window": {"name": "last_n_days", "n": 7}, "filters": [{"field": "value_eth", "op": "=", "value": 0}]}
    scripted = ScriptedModel({"semantic": json.dumps(zero_value)})
    ctx = GenerationContext("What fraction of transactions in the last 7 days moved no ETH?", "bigquery", "GoogleSQL",
                            "", semantic=SemanticContext(model))
    (candidate,) = semantic(ctx, scripted, cfg, 1, None)
    assert "the semantic layer divides the part by the whole" in scripted.requests[0].messages[-1][1]
    assert "transaction_count_share" in candidate.sql
    assert candidate.reading.startswith("share of number of transactions where value eth = 0")
    each_type = replace(ctx, question="What percentage of transactions in the last 7 days used each type?")
    semantic(each_type, scripted, cfg, 1, None)  # each row's share of a split: no part
    assert "divides the part" not in scripted.requests[-1].messages[-1][1]


def test_each_step_of_a_plan_that_ranks_first_is_fitted_to_its_own_clause(model):
    """The day is ranked by the ETH its first clause names, not by the fraction the next clause asks for, which the
    later step keeps; both steps keep the window the whole question names."""
    window = {"name": "last_n_days", "n": 7}
    share = {"model": "transactions", "measures": ["burned_share_of_fees"], "dimensions": ["day"], "window": window}
    ranked = {**share, "order_by": [{"field": "burned_share_of_fees", "direction": "desc"}], "limit": 1}
    that_day = {**share, "filters": [{"field": "day", "op": "in", "value": {"step": 1}}]}
    question = "Which day of the last 7 days burned the most ETH, and what fraction of that day's fees was burned?"
    fit = QuestionFit(SemanticContext(model, plans=True, window=window), question)
    compiled, error = compile_reply(model, json.dumps({"steps": [ranked, that_day]}), fit)
    first, then = compiled.query.steps
    assert error is None and first.measures == ["burned_eth"] and then.measures == ["burned_share_of_fees"]
    assert compiled.sql.count("INTERVAL 7 DAY") == 2
