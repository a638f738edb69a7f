"""A grouped result of aggregates alone (`SELECT COUNT(*) ... GROUP BY bucket`): one row per group, none saying which,
so a breakdown cannot be read, and a question asking one figure over the groups gets many rows. Only the result's
SELECTs count: a subquery may group rows only to aggregate them again."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis, result_scopes
from askchain.rules.base import Check, Finding
from askchain.rules.sql import bare_sql, owned_by

#: Aggregates that, taken of a grouped expression, are that expression: each says which group its row is.
SAME_WITHIN_A_GROUP = (exp.Min, exp.Max, exp.Avg, exp.AnyValue)


class GroupsShown(Check):
    """A grouped result of aggregates alone: no row says which group it is."""

    id = "groups_shown"
    order = 100

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        root = analysis.root(tree)
        if root is None:
            return
        for select in (scope.expression for scope in result_scopes(root)):
            group = select.args.get("group")
            keys = [key for key in (group.expressions if group else []) if not isinstance(key, exp.Literal)]
            if not keys or len(keys) < len(group.expressions):
                continue  # no grouping, or by position: that projection is the group
            grouped = {bare_sql(key, dialect) for key in keys}

            def shows_group(projection: exp.Expression) -> bool:
                value = projection.unalias()
                return not owned_by(select, projection, exp.AggFunc) or (
                    isinstance(value, SAME_WITHIN_A_GROUP) and bare_sql(value.this, dialect) in grouped)

            if not any(shows_group(p) for p in select.expressions):
                key = keys[0].sql(dialect=dialect)
                yield self.error(
                    f"GROUP BY {', '.join(k.sql(dialect=dialect) for k in keys)} gives one row per group, but the result "
                    f"shows only aggregates, so no row says which group it is: select {key} beside them, or, for one "
                    "figure over all the groups, aggregate the grouped rows in an outer query")
