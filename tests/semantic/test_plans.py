"""A plan of semantic queries compiles to one query: the steps as CTEs, each later step joined to the step whose
values it takes, in the first step's order; the few-shot plans answer as their golds do (tests/semantic/
test_examples.py). Here: each way a step joins, and what the layer refuses."""

from __future__ import annotations

import pytest
import sqlglot

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.reading import Field

LAST_7 = {"name": "last_n_days", "n": 7}
TOP_MINERS = {"model": "blocks", "measures": ["block_count"], "dimensions": ["miner"], "window": LAST_7,
              "order_by": [{"field": "block_count", "direction": "desc"}], "limit": 3}
THEIR_TIPS = {"model": "transactions", "measures": ["tips_eth", "transaction_count"], "dimensions": [],
              "window": LAST_7, "filters": [{"field": "miner", "op": "in", "value": {"step": 1}}]}
DATASET = "bigquery-public-data.crypto_ethereum"
WINDOW = "DATE({t}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE({t}) < CURRENT_DATE()"
GOLD_TIPS = (
    f"WITH top AS (SELECT miner, COUNT(*) AS blocks FROM `{DATASET}.blocks` WHERE {WINDOW.format(t='timestamp')} "
    f"GROUP BY miner ORDER BY blocks DESC LIMIT 3) SELECT top.miner, top.blocks, "
    f"SUM(CAST(t.receipt_gas_used AS NUMERIC) * (t.receipt_effective_gas_price - b.base_fee_per_gas)) / 1e18, "
    f"COUNT(t.hash) FROM top LEFT JOIN `{DATASET}.blocks` b ON b.miner = top.miner "
    f"LEFT JOIN `{DATASET}.transactions` t ON t.block_number = b.number AND {WINDOW.format(t='t.block_timestamp')} "
    f"WHERE {WINDOW.format(t='b.timestamp')} GROUP BY top.miner, top.blocks ORDER BY top.blocks DESC")


def plan(*steps) -> dict:
    return {"steps": list(steps)}


def outer(sql: str) -> sqlglot.exp.Select:
    return sqlglot.parse_one(sql, read="bigquery")


def test_a_top_n_then_a_measure_of_those_n_is_one_query_grouped_by_each_of_them(semantic_model, run_pinned):
    compiled = semantic_model.compile(plan(TOP_MINERS, THEIR_TIPS))
    tree = outer(compiled.sql)
    assert [cte.alias for cte in tree.args["with_"].expressions] == ["step_1", "step_2"]
    assert tree.named_selects == ["miner", "block_count", "tips_eth", "transaction_count"]
    assert "LEFT JOIN step_2\n  ON step_2.miner = step_1.miner" in compiled.sql
    assert "FROM step_1" in compiled.sql and "askchain_step" not in compiled.sql
    columns, rows = run_pinned(compiled.sql)
    assert len(rows) == 3 and rows == run_pinned(GOLD_TIPS)[1]
    assert compiled.reading.startswith("step 1: number of blocks")
    assert "; then step 2: priority fees" in compiled.reading
    assert compiled.query.steps[1].dimensions == ["miner"]  # "for each of those": grouped by the key it takes


def test_a_step_equal_to_an_earlier_result_takes_it_as_a_list(semantic_model):
    equal = {**THEIR_TIPS, "filters": [{"field": "miner", "op": "=", "value": {"step": 1}}]}
    as_equal, as_list = (semantic_model.compile(plan(TOP_MINERS, step)).sql for step in (equal, THEIR_TIPS))
    assert as_equal == as_list


def test_a_field_of_another_entity_is_linked_by_the_dimension_named_as_the_key(semantic_model):
    """The model filtered transactions' recipients by the top fee recipients: blocks have no recipient, and
    transactions have a dimension `miner`, so the link is by that."""
    to_address = {**THEIR_TIPS, "dimensions": ["to_address"],
                  "filters": [{"field": "to_address", "op": "in", "value": {"step": 1}}]}
    compiled = semantic_model.compile(plan(TOP_MINERS, to_address))
    assert compiled.query.steps[1].dimensions == ["miner"]
    assert "ON step_2.miner = step_1.miner" in compiled.sql


def test_a_field_the_earlier_model_has_is_kept_as_written(semantic_model):
    """Transfers received by the top senders: `to_address` means something to transactions, so it is the model's
    pick, not a mistake."""
    senders = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["from_address"],
               "window": LAST_7, "order_by": [{"field": "transaction_count", "direction": "desc"}], "limit": 5}
    received = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [], "window": LAST_7,
                "filters": [{"field": "to_address", "op": "in", "value": {"step": 1}}]}
    compiled = semantic_model.compile(plan(senders, received))
    assert "ON step_2.to_address = step_1.from_address" in compiled.sql
    assert "COALESCE(step_2.transfer_count, 0) AS transfer_count" in compiled.sql  # none received: 0, not NULL


def test_after_a_single_row_a_series_sits_beside_it(semantic_model, run_pinned):
    busiest = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"], "window": LAST_7,
               "order_by": [{"field": "transaction_count", "direction": "desc"}], "limit": 1}
    hourly = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["hour_of_day"],
              "window": LAST_7, "filters": [{"field": "day", "op": "in", "value": {"step": 1}}]}
    compiled = semantic_model.compile(plan(busiest, hourly))
    assert "CROSS JOIN step_2" in compiled.sql
    assert outer(compiled.sql).named_selects == ["day", "transaction_count", "hour_of_day", "transaction_count_2"]
    columns, rows = run_pinned(compiled.sql)
    assert [row[2] for row in rows] == sorted(row[2] for row in rows)  # then in time order
    assert len({row[0] for row in rows}) == 1


def test_two_windows_split_alike_sit_side_by_side_on_the_split(semantic_model):
    last = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["weekday"], "window": LAST_7}
    before = {**last, "window": {"name": "previous_n_days", "n": 7}}
    compiled = semantic_model.compile(plan(last, before))
    assert "LEFT JOIN step_2\n  ON step_2.weekday = step_1.weekday" in compiled.sql
    assert outer(compiled.sql).named_selects == ["weekday", "transaction_count", "transaction_count_2"]


def test_a_step_only_excluded_from_is_no_part_of_the_answer(semantic_model):
    yesterday = {"model": "transactions", "measures": [], "dimensions": ["from_address"],
                 "window": {"name": "n_days_ago", "n": 2}}
    new = {"model": "transactions", "measures": ["distinct_senders"], "dimensions": [], "window": {"name": "yesterday"},
           "filters": [{"field": "from_address", "op": "not in", "value": {"step": 1}}]}
    compiled = semantic_model.compile(plan(yesterday, new))
    tree = outer(compiled.sql)
    assert tree.named_selects == ["distinct_senders"] and "FROM step_2" in compiled.sql
    assert " ".join(compiled.sql.split()).count("NOT ( from_address IN ( SELECT from_address FROM step_1 ) )") == 1


def test_a_plan_for_the_found_rows_together_answers_with_their_one_total(semantic_model, run_pinned):
    """`"each": false` ("how many transactions did the 3 top fee recipients' blocks hold together"): the later step
    is not grouped by the values it takes, and the step that chose them is no part of the answer."""
    compiled = semantic_model.compile({"steps": [TOP_MINERS, THEIR_TIPS], "each": False})
    assert outer(compiled.sql).named_selects == ["tips_eth", "transaction_count"] and "FROM step_2" in compiled.sql
    assert compiled.query.each is False and compiled.query.steps[1].dimensions == []
    per_miner = run_pinned(GOLD_TIPS)[1]
    (tips, count), = run_pinned(compiled.sql)[1]
    assert count == sum(row[3] for row in per_miner) and tips == pytest.approx(sum(row[2] for row in per_miner))


@pytest.mark.parametrize(("steps", "message"), [
    ((TOP_MINERS,), "malformed semantic plan: steps"),
    ((TOP_MINERS, {**THEIR_TIPS, "dimensions": ["day"], "filters": []}), "step 2 groups by day without taking"),
    ((TOP_MINERS, {**THEIR_TIPS, "filters": [{"field": "miner", "op": "in", "value": {"step": 2}}]}),
     "takes step 2's values; the earlier steps: 1"),
    (({**TOP_MINERS, "dimensions": [], "order_by": [], "limit": None}, THEIR_TIPS),
     "takes step 1's values, but step 1 groups by nothing"),
])
def test_a_plan_the_layer_cannot_join_is_refused_with_its_reason(semantic_model, steps, message):
    with pytest.raises(SemanticQueryError, match=message):
        semantic_model.compile(plan(*steps))


@pytest.mark.parametrize("expr,unit,counts", [
    ("_.count()", "count", True),
    ("_.from_address.nunique()", "count", True),
    ("_.count() / 24", "count", True),  # a count over a constant is still 0 where no row is found
    ("_.count(where=_.receipt_status == 0) / _.count()", "fraction", False),
    ("_.value.sum() / 1e18", "ETH", False),
    ("_.gas_used.mean()", "gas", False),
])
def test_a_step_fills_with_0_only_the_measures_that_count(expr, unit, counts):
    """What a plan's LEFT JOIN writes as COALESCE(..., 0) for a key a step found no row for."""
    measure = Field.of("m", {"expr": expr, "description": "", "metadata": {"unit": unit}}, {})
    assert measure.counts is counts
