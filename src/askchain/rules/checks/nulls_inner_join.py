"""`x IS NULL` on a column an inner join matches on is never true: the join keeps only the rows where x found a match
(`COUNTIF(tx.to_address IS NULL)` after `JOIN contracts c ON c.address = tx.to_address` counts nothing). The rows
without a match are kept by a LEFT JOIN."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import inner_join_keys


class NullsAnInnerJoinDrops(Check):
    """`x IS NULL` on a key an inner join matches on: never true."""

    id = "nulls_inner_join"
    order = 140

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for test, keys in analysis.scoped_nodes(exp.Is, of_scope=lambda scope: inner_join_keys(scope.expression)):
            if not keys:
                continue
            column, outer = test.this, test.parent
            while isinstance(outer, exp.Paren):
                outer = outer.parent
            # IS NOT NULL: NOT around it, or (Postgres) the test's own negation
            if isinstance(outer, exp.Not) or test.args.get("negate") or not isinstance(test.expression, exp.Null) \
                    or not isinstance(column, exp.Column):
                continue
            name = column.sql()
            if (column.table.lower(), column.name.lower()) in keys:
                yield self.error(f"{name} IS NULL is never true: the inner join on {name} keeps only the rows "
                                 f"where it has a match; keep the rows without one with a LEFT JOIN")
                return  # one such finding is enough to send the query back
