"""The share a part of the rows holds: the part's measure over the whole's, per row of the query's dimensions, 0
where the part has no row; what a part share cannot take is rejected in one line."""

from __future__ import annotations

import pytest

from askchain.errors import SemanticQueryError

TRANSFERS = {"model": "token_transfers", "measures": ["transfer_count"], "window": {"name": "last_n_days", "n": 30}}
NFT = {"field": "is_nft", "op": "=", "value": True}
MINT = {"field": "is_mint", "op": "=", "value": True}


def _count(semantic_model, run_pinned, query) -> int:
    return run_pinned(semantic_model.compile(query).sql)[1][0][0]


def test_the_part_is_divided_by_the_whole_the_filters_keep(semantic_model, run_pinned):
    compiled = semantic_model.compile({**TRANSFERS, "filters": [NFT], "share_where": [MINT]})
    columns, rows = run_pinned(compiled.sql)
    part = _count(semantic_model, run_pinned, {**TRANSFERS, "filters": [NFT, MINT]})
    whole = _count(semantic_model, run_pinned, {**TRANSFERS, "filters": [NFT]})
    assert columns == ["transfer_count_share"]
    assert 0 < part < whole  # the fixture holds NFT mints and other NFT transfers
    assert rows[0][0] == pytest.approx(part / whole)
    assert "share of number of transfers where is mint = True, a fraction (0-1)" in compiled.reading


def test_a_sum_by_day_in_percent_and_a_day_without_the_part_is_zero(semantic_model, run_pinned):
    fees = {"model": "transactions", "measures": ["total_fees_eth"], "dimensions": ["day"],
            "window": {"name": "last_n_days", "n": 7}, "order_by": [{"field": "day", "direction": "asc"}]}
    part = [{"field": "transaction_type", "op": "=", "value": 2}]
    columns, rows = run_pinned(semantic_model.compile({**fees, "share_where": part, "percent": True}).sql)
    _, totals = run_pinned(semantic_model.compile(fees).sql)
    _, parts = run_pinned(semantic_model.compile({**fees, "filters": part}).sql)
    by_day = dict(parts)
    assert columns == ["day", "total_fees_eth_percent"]
    assert [day for day, _ in rows] == [day for day, _ in totals]
    for (day, share), (_, total) in zip(rows, totals):
        assert share == pytest.approx(100 * float(by_day.get(day, 0)) / float(total))


def test_no_row_in_the_part_is_a_share_of_zero(semantic_model, run_pinned):
    none = [{"field": "from_address", "op": "=", "value": "0x000000000000000000000000000000000000dead"}]
    _, rows = run_pinned(semantic_model.compile({**TRANSFERS, "share_where": none}).sql)
    assert rows == [(0,)]


@pytest.mark.parametrize("change,reason", [
    ({"measures": ["distinct_senders"]}, "does not add up"),
    ({"share_of_total": True, "dimensions": ["token_address"]}, "cannot be asked with"),
    ({"share_where": [{"field": "transfer_count", "op": ">", "value": 1}]}, "must be a dimension's value"),
])
def test_what_a_part_share_cannot_take_is_rejected(semantic_model, change, reason):
    with pytest.raises(SemanticQueryError, match=reason):
        semantic_model.compile({**TRANSFERS, "share_where": [MINT], **change})
