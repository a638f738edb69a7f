"""Shares of the rows a filter already keeps (`COUNTIF(c) / COUNT(*) ... WHERE c`): always 1, found for the check
that sends them back and for the repair that takes the condition out of WHERE."""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.scope import Scope, traverse_scope

from askchain.rules.sql import (COMPARISONS, as_count, bare_sql, condition_key, conjuncts, inner_join_keys, is_zero,
                                quotient)

class FilteredShare(NamedTuple):
    """A share taken among rows that all meet the condition it counts by: always 1 (or 100 as a percentage)."""
    select: exp.Select
    share: exp.Expression
    #: The kept conditions the share's condition restates, each with the WHERE it comes from ("WHERE": the select's
    #: own).
    restated: list[tuple[exp.Expression, str]]


def shares_of_the_filter(tree: exp.Expression, dialect: str) -> Iterator[FilteredShare]:
    """Each share whose condition every row it reads already meets (`COUNTIF(c) / COUNT(*) ... WHERE c`, `AVG(IF(c,
    1, 0))`, or WHERE c in the CTE it reads). A condition of several ANDed parts is met when WHERE keeps each of them,
    a test that a column is not NULL aside where the rows cannot hold NULL there (an inner join's key, a column
    compared elsewhere); `x = TRUE` is `x`."""
    for select, conditions in _selects_with_kept_conditions(tree):
        kept = {condition_key(c, dialect): (c, where) for c, where in conditions}
        if not kept:
            continue
        for share in select.find_all(exp.Div, exp.SafeDivide, exp.Anonymous, exp.Avg):
            if share.find_ancestor(exp.Select) is not select:
                continue
            part, whole = (share.this, None) if isinstance(share, exp.Avg) else quotient(share) or (None, None)
            if part is None:
                continue
            counted, restated = _of_all_rows(part, kept, _never_null(select, conditions), dialect)
            constant = isinstance(counted, exp.Literal) if whole is None else (
                counted is not None and bare_sql(counted, dialect) == bare_sql(as_count(whole), dialect))
            if constant:
                yield FilteredShare(select, share, [kept[key] for key in restated])


def _restated(condition: exp.Expression, kept: Mapping[str, tuple[exp.Expression, str]], never_null: set[str],
              dialect: str) -> list[str]:
    """The keys of the kept conditions `condition` restates: all of its ANDed parts (tests of NOT NULL on a column
    the rows never hold NULL in aside), or none when WHERE does not keep one of them. A part restates a condition
    of the select's own WHERE only on the same tables, where both name theirs (`a.status = 1` is not `b.status = 1`)."""
    parts = conjuncts(condition)
    keys = []
    for part in parts:
        tested = _tested_not_null(part)
        if tested is not None and tested.name.lower() in never_null | _compared_columns(parts):
            continue
        key = condition_key(part, dialect)
        tables = (_tables_named(part), _tables_named(kept[key][0])) if key in kept else ()
        if key not in kept or kept[key][1] == "WHERE" and all(tables) and tables[0] != tables[1]:
            return []
        keys.append(key)
    return keys


def _tested_not_null(condition: exp.Expression) -> exp.Column | None:
    """The column `condition` only tests to be not NULL (`x IS NOT NULL`); None for any other condition."""
    test = condition.this.unnest() if isinstance(condition, exp.Not) else None
    column = test.this if isinstance(test, exp.Is) and isinstance(test.expression, exp.Null) else None
    return column if isinstance(column, exp.Column) else None


def _never_null(select: exp.Select, kept: list[tuple[exp.Expression, str]]) -> set[str]:
    """The columns (lower-cased names) every row a select reads holds a value in: the keys of its inner joins and the
    columns its kept conditions compare."""
    return {name for _, name in inner_join_keys(select)} | _compared_columns([condition for condition, _ in kept])


def _compared_columns(conditions: list[exp.Expression]) -> set[str]:
    """The columns (lower-cased names) these conditions compare as they stand: a row they keep has a value there."""
    return {side.name.lower() for condition in conditions if isinstance(condition, COMPARISONS)
            for side in (condition.this, condition.args.get("expression")) if isinstance(side, exp.Column)}


def _tables_named(condition: exp.Expression) -> set[str]:
    """The tables (or aliases) a condition's columns name, lower case; empty when it names none."""
    return {column.table.lower() for column in condition.find_all(exp.Column) if column.table}


def _selects_with_kept_conditions(tree: exp.Expression) -> list[tuple[exp.Select, list[tuple[exp.Expression, str]]]]:
    """Each SELECT with the conditions every row it reads meets, each with the WHERE it comes from; its own WHERE's
    alone where sqlglot cannot scope the query."""
    try:
        return [(scope.expression, _kept_conditions(scope)) for scope in traverse_scope(tree)
                if isinstance(scope.expression, exp.Select)]
    except OptimizeError:
        return [(select, _own_conditions(select)) for select in tree.find_all(exp.Select)]


def _own_conditions(select: exp.Select) -> list[tuple[exp.Expression, str]]:
    """The conditions a SELECT's own WHERE keeps, each with that origin."""
    where = select.args.get("where")
    return [(c, "WHERE") for c in conjuncts(where.this)] if where else []


def _kept_conditions(scope: Scope) -> list[tuple[exp.Expression, str]]:
    """The conditions every row a SELECT reads meets, each with the WHERE it comes from: its own, and those of the
    one CTE or subquery it reads alone (no join) on columns that source passes on under their own names (all of
    them with `*`, when that source joins nothing)."""
    select = scope.expression
    kept = _own_conditions(select)
    sources = [source for _, source in scope.selected_sources.values()]
    if select.args.get("joins") or len(sources) != 1 or not isinstance(sources[0], Scope) or \
            not isinstance(sources[0].expression, exp.Select):
        return kept
    inner = sources[0].expression
    every = not inner.args.get("joins") and any(isinstance(p, exp.Star) for p in inner.expressions)
    passed = {p.alias_or_name.lower() for p in inner.expressions
              if isinstance(p.unalias(), exp.Column) and p.unalias().name.lower() == p.alias_or_name.lower()}
    cte = inner.find_ancestor(exp.CTE)
    source = f"the WHERE of {cte.alias if cte else 'the subquery'}"
    return kept + [(condition, source) for condition, _ in _kept_conditions(sources[0])
                   if every or all(column.name.lower() in passed for column in condition.find_all(exp.Column))]


def _of_all_rows(part: exp.Expression, kept: Mapping[str, tuple[exp.Expression, str]], never_null: set[str],
                 dialect: str) -> tuple[exp.Expression | None, list[str]]:
    """`part` (a share's numerator, or what AVG takes) counted over all rows where it counts by a condition WHERE
    keeps (`COUNTIF(c)` -> `COUNT(*)`, `IF(c, x, 0)` -> `x`), as `as_count` reads it, and the keys of the kept
    conditions the first such condition restates; (None, []) when it counts by no kept condition."""
    restated: list[list[str]] = []

    def drop(node: exp.Expression) -> exp.Expression:
        condition, kept_value = None, None
        if isinstance(node, exp.CountIf):
            condition, kept_value = node.this, exp.Count(this=exp.Star())
        elif isinstance(node, exp.If) and is_zero(node.args.get("false")):
            condition, kept_value = node.this, node.args.get("true")
        elif isinstance(node, exp.Case) and len(node.args.get("ifs") or []) == 1 and is_zero(node.args.get("default")):
            condition, kept_value = node.args["ifs"][0].this, node.args["ifs"][0].args.get("true")
        keys = _restated(condition, kept, never_null, dialect) if condition is not None else []
        if keys and kept_value is not None:
            restated.append(keys)
            return kept_value.copy()
        return node

    counted = as_count(part.copy().transform(drop))
    return (counted, restated[0]) if restated else (None, [])
