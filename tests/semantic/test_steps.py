"""A plan step's filter takes an earlier step's result: the layer leaves a placeholder the plan reads from that step's
CTE, so the plan is the whole question as one query, equal to the query an analyst writes with a CTE."""

from __future__ import annotations

import pytest

from askchain.errors import SemanticQueryError

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


@pytest.mark.parametrize("condition, reason", [
    ({"field": "from_address", "op": "in", "value": {"step": 2}}, "takes step 2's values; the earlier steps: 1"),
    ({"field": "from_address", "op": ">", "value": {"step": 1}}, "take the operator 'in' or 'not in'"),
])
def test_a_step_filter_the_layer_cannot_take_is_rejected_with_its_reason(semantic_model, condition, reason):
    with pytest.raises(SemanticQueryError, match=reason):
        semantic_model.compile({**THEIR_TRANSFERS, "filters": [condition]}, steps=[1])


def test_a_step_filter_is_a_placeholder_the_plan_reads_from_the_steps_cte(semantic_model, run_pinned):
    """Compiled alone, the filter holds the step's placeholder; in a plan it reads step 1's CTE and counts what the
    analysts' query counts (the found senders' transfers, together)."""
    assert "IN ('askchain_step_1')" in semantic_model.compile(THEIR_TRANSFERS, steps=[1]).sql
    compiled = semantic_model.compile({"steps": [TOP_SENDERS, THEIR_TRANSFERS], "each": False})
    assert "askchain_step" not in compiled.sql and "LIMIT 5" in compiled.sql
    assert "INTERVAL '7'" not in compiled.sql  # written as analysts write it
    assert run_pinned(compiled.sql)[1] == run_pinned(GOLD)[1] and run_pinned(GOLD)[1][0][0] > 0
    assert "from address in the result of step 1" in compiled.reading


def test_without_earlier_steps_a_step_filter_says_there_are_none(semantic_model):
    with pytest.raises(SemanticQueryError, match="the earlier steps: none"):
        semantic_model.compile(THEIR_TRANSFERS)


def test_the_decoding_schema_admits_a_step_as_a_filter_value(semantic_model):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(THEIR_TRANSFERS, semantic_model.json_schema())
