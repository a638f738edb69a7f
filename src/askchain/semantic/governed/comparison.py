"""A window set against the period of the same length before it ("compared with the 7 days before", "the week before
it"): each measure over both periods, aggregated by boring-semantic-layer, the two put together by ibis.

`rows`: one aggregate with a row per period, named by its window (`last_7_days`, `previous_7_days`), the recent one
first, as "how many in each of the two periods" asks. `columns`: one row (or one per value of the query's
dimensions, those the recent period finds) with each measure over each period side by side and its percentage change
from the earlier period, as "and what is the percentage change" asks.
"""

from __future__ import annotations

import ibis
from boring_semantic_layer.safe_eval import safe_eval

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.ordering import ordered_and_limited, sort_keys
from askchain.semantic.governed.query import SemanticQuery, reshaped_besides
from askchain.semantic.governed.reading import TIME_DIMENSIONS, ModelSpec

#: The column naming each period in a comparison of `rows`.
PERIOD = "period"


def compared_name(measure: str, label: str) -> str:
    """The column of a measure over one period of a comparison side by side (`transaction_count_last_7_days`)."""
    return f"{measure}_{label}"


def change_name(measure: str) -> str:
    """The column of a measure's percentage change from the earlier period (`transaction_count_pct_change`)."""
    return f"{measure}_pct_change"


def compared_with_previous(model, query: SemanticQuery, spec: ModelSpec, periods: list[tuple[str, str]],
                           filters: list):
    """The query's measures over its two `periods`, (label, window filter) each, the recent one first, as its
    `compared_with_previous` asks; `filters` are the query's other filters."""
    _reject_what_a_comparison_cannot_take(query, spec)
    if query.compared_with_previous == "rows":
        return _a_row_per_period(model, query, periods, filters)
    return _side_by_side(model, query, periods, filters)


def _reject_what_a_comparison_cannot_take(query: SemanticQuery, spec: ModelSpec) -> None:
    if spec.time is None or not query.measures:
        raise SemanticQueryError("a comparison of two periods needs a measure and a model with a time column")
    if reshaped_besides(query, "compared_with_previous"):
        raise SemanticQueryError("a comparison of two periods cannot be asked with a running total, a moving average, "
                                 "an average per period or a share of the total or of a part")
    split = set(query.dimensions) & TIME_DIMENSIONS
    if split:
        raise SemanticQueryError(f"a split by {sorted(split)[0]} shows each period already: widen the window to "
                                 "both periods instead of comparing it with the one before")
    if query.compared_with_previous == "rows" and query.limit:
        raise SemanticQueryError("a row per period takes no limit: compare side by side to rank the recent period")


def _a_row_per_period(model, query: SemanticQuery, periods: list[tuple[str, str]], filters: list):
    """One aggregate over both periods, grouped by the period each row falls in (the recent one first)."""
    (recent_label, recent), (earlier_label, earlier) = periods
    in_recent = safe_eval(recent, context={"_": ibis._, "ibis": ibis}).unwrap()
    periodic = model.with_dimensions(**{PERIOD: lambda table: ibis.ifelse(in_recent.resolve(table), recent_label,
                                                                           earlier_label)})
    table = periodic.query(dimensions=[*query.dimensions, PERIOD], measures=query.measures,
                           filters=[f"({recent}) | ({earlier})", *filters]).to_untagged()
    order = sort_keys(table, [(o.field, o.direction) for o in query.order_by])
    return table.order_by([*order, ibis.desc(table[PERIOD] == recent_label)])


def _side_by_side(model, query: SemanticQuery, periods: list[tuple[str, str]], filters: list):
    """Each period's aggregate (the recent one ordered and limited as the query asks), joined on the query's
    dimensions, with each measure's percentage change; a dimension's value the earlier period lacks has NULLs."""
    (recent_label, recent), (earlier_label, earlier) = periods
    now = model.query(dimensions=query.dimensions, measures=query.measures, filters=[recent, *filters],
                      order_by=[(o.field, o.direction) for o in query.order_by] or None,
                      limit=query.limit).to_untagged()
    before = model.query(dimensions=query.dimensions, measures=query.measures,
                         filters=[earlier, *filters]).to_untagged()
    before = before.rename({compared_name(m, earlier_label): m for m in query.measures})
    joined = now.left_join(before, query.dimensions) if query.dimensions else now.cross_join(before)
    columns = {}
    for m in query.measures:
        current, previous = joined[m], joined[compared_name(m, earlier_label)]
        columns[compared_name(m, recent_label)] = current
        columns[compared_name(m, earlier_label)] = previous
        columns[change_name(m)] = 100 * (current - previous) / previous
    table = joined.select(*query.dimensions, **columns)
    order = [(compared_name(o.field, recent_label) if o.field in query.measures else o.field, o.direction)
             for o in query.order_by]
    return ordered_and_limited(table, order, None)
