"""Questions that need several queries, written as one plan of semantic queries and compiled to one query.

"For the 3 fee recipients with the most blocks, how much did their blocks burn and their transactions tip?" is a
top 3 on blocks, then a measure on transactions filtered to those three
(`{"field": "block_miner", "op": "in", "value": {"step": 1}}`). Each step compiles on its own; the plan becomes one
query the user can run: the steps as CTEs, a later step's filter reading the earlier step's CTE, and each later step
joined to the step whose values it takes, on the dimension it filters (grouped by it where that step found several
rows: "for each of those"), listed in the first step's order. A plan that asks for those rows together (`"each":
false`: "how much did they send together") keeps the later step's one total, and the step that only chose the rows
is no part of the output, as a step only excluded from (`not in`) is not. A step that takes no earlier step's values
adds its single row beside the others (two windows side by side). The layer, not the model, writes every join.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, Protocol

import sqlglot
from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.query import SemanticQuery, validated
from askchain.semantic.governed.reading import TIME_DIMENSIONS
from askchain.semantic.governed.sql import as_analysts_write
from askchain.semantic.governed.steps import DIALECT, StepRef, placeholder_step


class Layer(Protocol):
    """What a plan needs of the semantic model (askchain.semantic.governed.model, which compiles plans with this
    module): its models' specs and the compiler of one query."""

    specs: Mapping[str, Any]

    def compile(self, query: Any, steps: Collection[int] = ()) -> Any: ...


#: A plan has at least two steps (one is a query) and, like the planner's, at most three.
MAX_STEPS = 3


class SemanticPlan(BaseModel):
    """Semantic queries in order, a later one free to filter on an earlier one's result (`{"step": n}`); `each`:
    a later step taking the values of an earlier step that found several rows answers for each of them (grouped by
    the value), or, false, for all of them together."""

    model_config = ConfigDict(extra="forbid")
    steps: list[SemanticQuery] = Field(min_length=2, max_length=MAX_STEPS)
    each: bool = True


@dataclass(frozen=True)
class CompiledPlan:
    """A plan as one SQL query, a reading per step, and the plan as compiled (after any fit to its question)."""

    sql: str
    reading: str
    query: SemanticPlan


@dataclass(frozen=True)
class _Step:
    """A compiled step: its number, SQL (placeholders for the steps it takes values from), output columns, query."""

    number: int
    sql: str
    columns: list[str]
    query: SemanticQuery

    @property
    def name(self) -> str:
        return f"step_{self.number}"

    def links(self, op: str = "in") -> list[tuple[str, int]]:
        return _links_of(self.query, op)


def is_plan(query) -> bool:
    return isinstance(query, SemanticPlan) or (isinstance(query, dict) and "steps" in query)


def compile_plan(model: Layer, plan: SemanticPlan | dict,
                 fit: Callable[[dict, int], dict] | None = None) -> CompiledPlan:
    """The plan's steps compiled one by one (each fitted first by `fit`, given the step and its number), then
    composed into one query."""
    plan = validated(SemanticPlan, plan, "plan")
    steps: list[_Step] = []
    readings: list[str] = []
    for number, query in enumerate(plan.steps, 1):
        query = SemanticQuery.model_validate(fit(query.model_dump(exclude_defaults=True), number) if fit else query)
        _found_sets(query, steps)
        query = _linked_by_name(model, query, steps)
        query = _grouped_by_links(query, steps) if plan.each else query
        compiled = model.compile(query, [s.number for s in steps])
        columns = sqlglot.parse_one(compiled.sql, read=DIALECT).named_selects
        steps.append(_Step(number, compiled.sql, columns, compiled.query))
        readings.append(f"step {number}: {compiled.reading}")
    fitted = SemanticPlan(steps=[s.query for s in steps], each=plan.each)
    counts = {s.number: {m for m in s.query.measures
                         if (measure := model.specs[s.query.model].measures.get(m)) is not None and measure.counts}
              for s in steps}
    return CompiledPlan(_composed(steps, counts), "; then ".join(readings), fitted)


def _linked_by_name(model: Layer, query: SemanticQuery, steps: list[_Step]) -> SemanticQuery:
    """Each filter taking an earlier step's values on the dimension of the same name as that step's key (a miner's
    blocks, then transactions by `miner`), and grouped by it instead, where the model has one and the field the
    query names means nothing to the earlier step's model (`to_address` of no block): a dimension's name is its
    entity across the models."""
    by_number = {s.number: s for s in steps}
    dimensions = model.specs[query.model].dimensions if query.model in model.specs else {}
    renamed: dict[str, str] = {}
    filters = []
    for condition in query.filters:
        earlier = by_number.get(condition.value.step) if isinstance(condition.value, StepRef) else None
        key = _key(earlier) if earlier is not None else None
        if key and condition.op == "in" and condition.field != key and key in dimensions \
                and condition.field not in model.specs[earlier.query.model].dimensions:
            renamed[condition.field] = key
            condition = condition.model_copy(update={"field": key})
        filters.append(condition)
    grouped = list(dict.fromkeys(renamed.get(d, d) for d in query.dimensions))
    return query.model_copy(update={"filters": filters, "dimensions": grouped}) if renamed else query


def _found_sets(query: SemanticQuery, steps: list[_Step]) -> None:
    """A step may take the values only of an earlier step that groups by something: one without a dimension is one
    aggregate row, no set of addresses, days or tokens to filter by."""
    for field, number in _links_of(query) + _links_of(query, "not in"):
        earlier = next((s for s in steps if s.number == number), None)
        if earlier is not None and not earlier.query.dimensions:
            raise SemanticQueryError(
                f"filter on '{field}' takes step {number}'s values, but step {number} groups by nothing: it finds no "
                "set of values; group it by the dimension it finds, or answer with one query")


def _grouped_by_links(query: SemanticQuery, steps: list[_Step]) -> SemanticQuery:
    """The step grouped by each field it takes from an earlier step that found several rows (no limit of 1): the
    question asks for each of those, not for all of them together."""
    by_number = {s.number: s for s in steps}
    added = [field for field, number in _links_of(query)
             if number in by_number and by_number[number].query.limit != 1 and field not in query.dimensions]
    return query.model_copy(update={"dimensions": [*dict.fromkeys(added), *query.dimensions]}) if added else query


def _links_of(query: SemanticQuery, op: str = "in") -> list[tuple[str, int]]:
    """(field, earlier step) for each filter of `query` taking an earlier step's values with `op`."""
    return [(f.field, f.value.step) for f in query.filters if isinstance(f.value, StepRef) and f.op == op]


def _key(step: _Step) -> str:
    """The column a later step takes as its values: the step's first dimension (its first column without one)."""
    return step.query.dimensions[0] if step.query.dimensions else step.columns[0]


def _composed(steps: list[_Step], counts: dict[int, set[str]]) -> str:
    """One query: every step as a CTE, the steps that are output joined as their links say, in the first step's
    order and then in time order."""
    shown = [s for s in steps if not _only_chooses_rows(s, steps)]
    root, joined, seen = shown[0], [], set(shown[0].columns)
    by_number = {s.number: s for s in shown}
    select: list[exp.Expression] = [exp.column(c, table=root.name) for c in root.columns]
    for step in shown[1:]:
        joined.append(_join(step, by_number))
        for column in (c for c in step.columns if c not in joined[-1]["keys"]):
            name = column if column not in seen else f"{column}_{step.number}"
            seen.add(name)
            value = exp.column(column, table=step.name)
            if joined[-1]["kind"] == "LEFT" and column in counts.get(step.number, ()):  # none found: counted 0
                value = exp.func("COALESCE", value, exp.Literal.number(0))
            select.append(value if name == column and isinstance(value, exp.Column) else exp.alias_(value, name))
    query = exp.select(*select).from_(root.name)
    for join in joined:
        query = query.join(join["table"], on=join.get("on"), join_type=join["kind"])
    order = _order(root, shown)
    query = query.order_by(*order) if order else query
    keys = {s.number: _key(s) for s in steps}
    for step in steps:
        query = query.with_(step.name, as_=_cte_of(step, keys))
    return as_analysts_write(query.sql(dialect=DIALECT, pretty=True))


def _taking(later: _Step, earlier: _Step) -> str | None:
    """How `later` takes `earlier`'s values (`in`): "each", grouped by the value taken (a row for each of those);
    "beside" the one row `earlier` found; "together", over all of its rows at once; None where it takes none. The
    output and its joins both follow from it."""
    fields = [field for field, number in later.links() if number == earlier.number]
    if not fields:
        return None
    if any(field in later.query.dimensions for field in fields):
        return "each"
    return "beside" if earlier.query.limit == 1 else "together"


def _only_chooses_rows(step: _Step, steps: list[_Step]) -> bool:
    """Whether `step` only chooses the rows of the later steps that take its values: they exclude them (`not in`),
    or take several of its rows together (not grouped by the value), so its own rows answer nothing."""
    ways = {_taking(later, step) for later in steps} - {None}
    excluded = any(number == step.number for later in steps for _, number in later.links("not in"))
    return (bool(ways) or excluded) and not ways & {"each", "beside"}


def _join(step: _Step, shown: dict[int, _Step]) -> dict:
    """How `step` joins the output, and on which of its columns: on the field it takes from an earlier step it is
    grouped by; on the first step's split where it splits alike without taking values (two windows by weekday);
    beside it where it is one row or its earlier step found one; never as a product of two lists of rows."""
    for field, number in step.links():
        if number in shown and field in step.query.dimensions:
            on = exp.column(field, table=step.name).eq(exp.column(_key(shown[number]), table=shown[number].name))
            return {"table": step.name, "on": on, "kind": "LEFT", "keys": {field}}
    single = not step.query.dimensions or any(_taking(step, earlier) == "beside" for earlier in shown.values())
    root = next(iter(shown.values()))
    if not step.links() and step.query.dimensions and set(step.query.dimensions) == set(root.query.dimensions):
        on = exp.and_(*(exp.column(d, table=step.name).eq(exp.column(d, table=root.name))
                        for d in root.query.dimensions))
        return {"table": step.name, "on": on, "kind": "LEFT", "keys": set(root.query.dimensions)}  # by weekday
    if not single:
        raise SemanticQueryError(
            f"step {step.number} groups by {', '.join(step.query.dimensions)} without taking an earlier step's values: "
            'filter one of its dimensions by a step\'s result ({"field": ..., "op": "in", "value": {"step": 1}})')
    return {"table": step.name, "kind": "CROSS", "keys": set()}


def _order(root: _Step, shown: list[_Step]) -> list[exp.Expression]:
    """The first step's order by its output columns, then each later step's time dimension."""
    order = []
    for item in root.query.order_by:
        column = next((c for c in root.columns if c == item.field or c.startswith(f"{item.field}_")
                       or c.endswith(f"_{item.field}")), None)
        if column:
            order.append(exp.Ordered(this=exp.column(column, table=root.name), desc=item.direction == "desc"))
    for step in shown[1:]:
        order += [exp.Ordered(this=exp.column(d, table=step.name), nulls_first=True)
                  for d in step.query.dimensions if d in TIME_DIMENSIONS]
    return order


def _cte_of(step: _Step, keys: dict[int, str]) -> exp.Expression:
    """The step's query with each earlier step's placeholder read from that step's CTE (its key column)."""
    def swap(node: exp.Expression) -> exp.Expression:
        number = placeholder_step(node)
        if number is None:
            return node
        values = exp.select(exp.column(keys[number])).from_(f"step_{number}")
        return exp.In(this=node.this, query=exp.Subquery(this=values))

    return sqlglot.parse_one(step.sql, read=DIALECT).transform(swap)
