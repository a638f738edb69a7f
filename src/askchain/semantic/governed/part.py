"""The share a part of the rows holds ("what share of ERC-721 transfers were mints", "what fraction of the fees came
from type 2 transactions"): each measure over the rows meeting the part's filters, divided by the same measure over
every row the query keeps, in one scan.

boring-semantic-layer aggregates by the query's dimensions and the fields the part filters on; ibis then sums each
measure twice per row of the query's dimensions, once where the part's filters hold (0 where no row does) and once
over all, and divides.
"""

from __future__ import annotations

from boring_semantic_layer.query import Filter

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.ordering import ordered_and_limited
from askchain.semantic.governed.query import SemanticQuery, reshaped_besides
from askchain.semantic.governed.reading import ModelSpec
from askchain.semantic.governed.steps import StepRef


def part_share_name(measure: str, percent: bool) -> str:
    """The column of a measure as the part's share of it (`transfer_count`: `transfer_count_share`)."""
    return f"{measure}_{'percent' if percent else 'share'}"


def shares_of_part(model, query: SemanticQuery, spec: ModelSpec, filters: list, part: list[dict]):
    """Each of the query's measures as the share of it the rows meeting `part` hold (boring-semantic-layer filters,
    on dimensions only) among those `filters` keep, by the query's dimensions, ordered and limited as it asks."""
    _reject_what_a_part_share_cannot_take(query, spec)
    fields = list(dict.fromkeys(f.field for f in query.share_where if f.field not in query.dimensions))
    table = model.query(dimensions=[*query.dimensions, *fields], measures=query.measures,
                        filters=filters).to_untagged()
    in_part = Filter(filter={"operator": "AND", "conditions": part}).to_callable()(table)
    shares = {part_share_name(m, query.percent): _share(table[m], in_part, query.percent) for m in query.measures}
    grouped = table.group_by(query.dimensions).aggregate(**shares) if query.dimensions else table.aggregate(**shares)
    order = [(part_share_name(o.field, query.percent) if o.field in query.measures else o.field, o.direction)
             for o in query.order_by]
    return ordered_and_limited(grouped, order, query.limit)


def _share(column, in_part, percent: bool):
    """The part's sum of `column` (0 where no row is in it) over the whole's; a whole of 0 has no share (NULL)."""
    part = column.sum(where=in_part).fill_null(0)
    return (part * 100 if percent else part) / column.sum().nullif(0)


def _reject_what_a_part_share_cannot_take(query: SemanticQuery, spec: ModelSpec) -> None:
    if not query.measures:
        raise SemanticQueryError("a share of a part needs a measure to divide")
    apart = [m for m in query.measures if not spec.measures[m].adds_up]
    if apart:
        raise SemanticQueryError(f"'{apart[0]}' does not add up over rows (a mean, a share or a distinct count): a "
                                 "part of the rows holds no share of it")
    if reshaped_besides(query, "share_where"):
        raise SemanticQueryError("a share of a part cannot be asked with a running total, a moving average, an "
                                 "average per period, a share of the total or a comparison of periods")
    for condition in query.share_where:
        if condition.field not in spec.dimensions or isinstance(condition.value, StepRef):
            raise SemanticQueryError(f"the part's filter on '{condition.field}' must be a dimension's value, not a "
                                     "measure or an earlier step's result")
