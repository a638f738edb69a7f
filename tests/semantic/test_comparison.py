"""A window set against the period before it: a row per period or both side by side with the percentage change, each
counting what the window and the one before count alone; what a comparison cannot take is rejected in one line."""

from __future__ import annotations

import pytest

from askchain.errors import SemanticQueryError

BLOCKS = {"model": "blocks", "measures": ["block_count"], "dimensions": [], "window": {"name": "last_n_days", "n": 7}}
EARLIER = {**BLOCKS, "window": {"name": "previous_n_days", "n": 7}}


def test_a_row_per_period_counts_what_each_window_counts_alone(semantic_model, run_pinned):
    compiled = semantic_model.compile({**BLOCKS, "compared_with_previous": "rows"})
    columns, rows = run_pinned(compiled.sql)
    counts = [run_pinned(semantic_model.compile(q).sql)[1][0][0] for q in (BLOCKS, EARLIER)]
    assert columns == ["period", "block_count"]
    assert rows == [("last_7_days", counts[0]), ("previous_7_days", counts[1])]  # the recent period first
    assert "against the 7 full UTC days before the last 7 days, a row each" in compiled.reading


def test_side_by_side_gives_both_and_the_percentage_change(semantic_model, run_pinned):
    compiled = semantic_model.compile({**BLOCKS, "compared_with_previous": "columns"})
    columns, rows = run_pinned(compiled.sql)
    recent, earlier = (run_pinned(semantic_model.compile(q).sql)[1][0][0] for q in (BLOCKS, EARLIER))
    assert columns == ["block_count_last_7_days", "block_count_previous_7_days", "block_count_pct_change"]
    assert rows[0][:2] == (recent, earlier)
    assert rows[0][2] == pytest.approx(100 * (recent - earlier) / earlier)
    assert "side by side with the percentage change" in compiled.reading


def test_side_by_side_by_a_dimension_keeps_the_recent_periods_ranking(semantic_model, run_pinned):
    query = {"model": "blocks", "measures": ["block_count"], "dimensions": ["miner"], "window": BLOCKS["window"],
             "order_by": [{"field": "block_count", "direction": "desc"}], "limit": 3}
    _, top = run_pinned(semantic_model.compile(query).sql)
    columns, rows = run_pinned(semantic_model.compile({**query, "compared_with_previous": "columns"}).sql)
    assert columns[:2] == ["miner", "block_count_last_7_days"]
    assert [row[:2] for row in rows] == top


def test_the_previous_full_week_is_set_against_the_week_before_it(semantic_model):
    compiled = semantic_model.compile({**BLOCKS, "window": {"name": "last_n_weeks", "n": 1},
                                       "compared_with_previous": "columns"})
    assert "INTERVAL 14 DAY" in compiled.sql and "block_count_previous_1_weeks" in compiled.sql


@pytest.mark.parametrize("query, error", [
    ({**BLOCKS, "window": {"name": "today"}}, "window 'today' has no period before it"),
    ({**BLOCKS, "window": None}, "window 'none' has no period before it"),
    ({**BLOCKS, "dimensions": ["day"]}, "a split by day shows each period already"),
    ({**BLOCKS, "running_total": True, "dimensions": []}, "cannot be asked with a running total"),
    ({**BLOCKS, "dimensions": ["miner"], "limit": 3}, "a row per period takes no limit"),
])
def test_what_a_comparison_cannot_take_is_rejected_in_one_line(query, error, semantic_model):
    with pytest.raises(SemanticQueryError, match=error):
        semantic_model.compile({**query, "compared_with_previous": "rows"})
