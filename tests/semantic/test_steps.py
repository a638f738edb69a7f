"""A later step's filter takes an earlier step's result: the layer composes that step's query into the new one, so
the last step is the whole question as one query, equal to the query an analyst writes with a CTE."""

from __future__ import annotations

import pytest

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.steps import EarlierStep

DATASET = "bigquery-public-data.crypto_ethereum"
LAST_7 = {"name": "last_n_days", "n": 7}
TOP_SENDERS = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["from_address"],
               "window": LAST_7, "order_by": [{"field": "transaction_count", "direction": "desc"},
                                              {"field": "from_address", "direction": "asc"}], "limit": 5}
THEIR_TRANSFERS = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [], "window": LAST_7,
                   "filters": [{"field": "from_address", "op": "in", "value": {"step": 1}}]}
WINDOW = "DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()"
GOLD = (f"WITH top AS (SELECT from_address FROM `{DATASET}.transactions` WHERE {WINDOW} GROUP BY from_address "
        f"ORDER BY COUNT(*) DESC, from_address LIMIT 5) SELECT COUNT(*) FROM `{DATASET}.token_transfers` "
        f"WHERE from_address IN (SELECT from_address FROM top) AND {WINDOW}")


@pytest.fixture(scope="module")
def first_step(semantic_model, run_pinned):
    sql = semantic_model.compile(TOP_SENDERS).sql
    columns, rows = run_pinned(sql)
    return {1: EarlierStep(1, "Which 5 addresses sent the most transactions in the last 7 days?", sql, columns[0],
                           len(rows))}


def test_a_step_filter_composes_the_earlier_query_and_counts_what_the_analysts_query_counts(
        semantic_model, run_pinned, first_step):
    compiled = semantic_model.compile(THEIR_TRANSFERS, first_step)
    assert "LIMIT 5" in compiled.sql and "askchain_step" not in compiled.sql
    assert "INTERVAL '7'" not in compiled.sql  # written as analysts write it, the earlier step's part too
    assert run_pinned(compiled.sql)[1] == run_pinned(GOLD)[1]
    assert run_pinned(GOLD)[1][0][0] > 0
    assert "from address in the result of step 1" in compiled.reading


@pytest.mark.parametrize("condition, reason", [
    ({"field": "from_address", "op": "in", "value": {"step": 2}}, "takes step 2's values; the earlier steps: 1"),
    ({"field": "from_address", "op": ">", "value": {"step": 1}}, "take the operator 'in' or 'not in'"),
])
def test_a_step_filter_the_layer_cannot_compose_is_rejected_with_its_reason(semantic_model, first_step, condition,
                                                                            reason):
    with pytest.raises(SemanticQueryError, match=reason):
        semantic_model.compile({**THEIR_TRANSFERS, "filters": [condition]}, first_step)


def test_equal_to_a_step_is_in_its_values(semantic_model, first_step):
    equal = {**THEIR_TRANSFERS, "filters": [{"field": "from_address", "op": "=", "value": {"step": 1}}]}
    assert semantic_model.compile(equal, first_step).sql == semantic_model.compile(THEIR_TRANSFERS, first_step).sql


def test_without_earlier_steps_a_step_filter_says_there_are_none(semantic_model):
    with pytest.raises(SemanticQueryError, match="the earlier steps: none"):
        semantic_model.compile(THEIR_TRANSFERS)


def test_the_decoding_schema_admits_a_step_as_a_filter_value(semantic_model):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(THEIR_TRANSFERS, semantic_model.json_schema())
