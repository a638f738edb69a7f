"""A join condition equating two schema columns that no foreign key links (and that do not share a name)."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis, schema_column
from askchain.rules.base import Check, Finding


class JoinsOffForeignKeys(Check):
    """A join on two columns no foreign key links (a warning: the schema may not declare every key)."""

    id = "joins"
    order = 190

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, schema = analysis.tree, analysis.schema
        edges = schema.foreign_key_edges()
        if not edges:
            return
        known = {frozenset({(a.lower(), b.lower()), (c.lower(), d.lower())}) for a, b, c, d in edges}
        for scope in analysis.scopes(tree):
            tables = analysis.tables(scope)
            for join in scope.expression.args.get("joins") or []:
                on = join.args.get("on")
                if on is None:
                    continue
                for eq in on.find_all(exp.EQ):
                    sides = [schema_column(side, tables) for side in (eq.left, eq.right)]
                    if None in sides:
                        continue
                    a, b = ((table.name.lower(), column.name.lower()) for table, column in sides)
                    if frozenset({a, b}) not in known and a[1] != b[1]:
                        yield self.warning(f"join {a[0]}.{a[1]} = {b[0]}.{b[1]} is not on a foreign key")
