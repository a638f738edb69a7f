"""Spider's hardness levels (easy / medium / hard / extra) computed from the gold SQL.

A reimplementation of `eval_hardness` in Spider's official evaluation.py, counting the same components on
a sqlglot tree instead of Spider's own parse (which exists only for Spider's annotated files). The official
rules count the top-level SELECT only (for A UNION B, that is A) and keep its quirks, reproduced here:
- component1: one each for WHERE, GROUP BY, ORDER BY, LIMIT; one per joined table; one per OR and per LIKE
  among the join, WHERE and HAVING conditions;
- component2: the subqueries used as condition values (WHERE/HAVING/ON) plus one for INTERSECT/UNION/EXCEPT
  (subqueries in FROM are table units, not nested queries);
- others: one if "aggregations" > 1, one each if there are several SELECT items, WHERE conditions or GROUP BY
  keys. Official "aggregations" are the SELECT items starting with an aggregate, aggregates in GROUP BY and in
  ORDER BY operands, plus (a quirk of `has_agg` on condition tuples) every NOT condition in WHERE and HAVING
  and every AND/OR joining HAVING conditions.
tests/eval/test_hardness.py checks agreement with the official rules applied to Spider's own parse.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one

LEVELS = ("easy", "medium", "hard", "extra")
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)
_QUERY = (exp.Subquery, exp.Query)


def spider_hardness(sql: str, dialect: str = "sqlite") -> str | None:
    """The official hardness level of `sql`, or None if sqlglot cannot parse it."""
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return None
    select = tree
    while isinstance(select, (exp.SetOperation, exp.Subquery, exp.Paren)):
        select = select.this
    if not isinstance(select, exp.Select):
        return None
    comp1, comp2, others = _components(select, nested_set_ops=int(isinstance(tree, exp.SetOperation)))
    return hardness_level(comp1, comp2, others)


def hardness_level(comp1: int, comp2: int, others: int) -> str:
    """The official decision table over the three component counts."""
    if comp1 <= 1 and others == 0 and comp2 == 0:
        return "easy"
    if (others <= 2 and comp1 <= 1 and comp2 == 0) or (comp1 <= 2 and others < 2 and comp2 == 0):
        return "medium"
    if (
        (others > 2 and comp1 <= 2 and comp2 == 0)
        or (2 < comp1 <= 3 and others <= 2 and comp2 == 0)
        or (comp1 <= 1 and others == 0 and comp2 <= 1)
    ):
        return "hard"
    return "extra"


def _components(select: exp.Select, nested_set_ops: int) -> tuple[int, int, int]:
    joins = select.args.get("joins") or []
    join_conds, join_ops = _flatten_all([j.args.get("on") for j in joins])
    where_conds, where_ops = _flatten_all([select.args.get("where") and select.args["where"].this])
    having_conds, having_ops = _flatten_all([select.args.get("having") and select.args["having"].this])
    group = select.args.get("group")
    group_keys = group.expressions if group else []
    order = select.args.get("order")
    order_keys = [o.this for o in order.expressions] if order else []
    conditions = join_conds + where_conds + having_conds

    comp1 = sum(bool(x) for x in (where_conds, group_keys, order_keys, select.args.get("limit")))
    comp1 += len(joins) if select.args.get("from_") else 0
    comp1 += (join_ops + where_ops + having_ops).count("or")
    comp1 += sum(isinstance(_positive(c), (exp.Like, exp.ILike)) for c in conditions)

    comp2 = nested_set_ops + sum(_subquery_values(c) for c in conditions)

    aggregations = (
        sum(_starts_with_aggregate(e) for e in select.expressions)
        + sum(isinstance(c, exp.Not) for c in where_conds + having_conds)
        + sum(isinstance(k, exp.AggFunc) for k in group_keys)
        + sum(_operand_aggregates(k) for k in order_keys)
        + len(having_ops)
    )
    others = sum((aggregations > 1, len(select.expressions) > 1, len(where_conds) > 1, len(group_keys) > 1))
    return comp1, comp2, others


def _flatten_all(conditions: list[exp.Expression | None]) -> tuple[list[exp.Expression], list[str]]:
    leaves: list[exp.Expression] = []
    ops: list[str] = []
    for condition in conditions:
        if condition is not None:
            more, more_ops = _flatten(condition)
            ops += (["and"] if leaves else []) + more_ops  # successive conditions join with AND, as in Spider
            leaves += more
    return leaves, ops


def _flatten(node: exp.Expression) -> tuple[list[exp.Expression], list[str]]:
    """The condition units and the AND/OR between them, in reading order (Spider parses conditions flat)."""
    if isinstance(node, exp.Paren):
        return _flatten(node.this)
    if isinstance(node, exp.Connector):
        left, left_ops = _flatten(node.left)
        right, right_ops = _flatten(node.right)
        return left + right, left_ops + [node.key] + right_ops
    return [node], []


def _positive(condition: exp.Expression) -> exp.Expression:
    return condition.this if isinstance(condition, exp.Not) else condition


def _subquery_values(condition: exp.Expression) -> int:
    unit = _positive(condition)
    return sum(isinstance(v, _QUERY) for v in unit.args.values())


def _starts_with_aggregate(item: exp.Expression) -> bool:
    node = item.this if isinstance(item, exp.Alias) else item
    while isinstance(node, _ARITHMETIC):
        node = node.left
    return isinstance(node, exp.AggFunc)


def _operand_aggregates(key: exp.Expression) -> int:
    operands = (key.left, key.right) if isinstance(key, _ARITHMETIC) else (key,)
    return sum(isinstance(o, exp.AggFunc) for o in operands)
