"""A column compared with itself (`transaction_type = t.transaction_type` over one table): always true, or false for
`<>`, whatever the row. A share counted with it (`SUM(CASE WHEN transaction_type = t.transaction_type THEN 1 END) /
COUNT(*)`) runs and is 100 % on every row. Compared once qualified, so a self-join's two sides and a correlated
subquery's outer column are other columns."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding

#: The comparisons whose two sides may be the same column.
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)


class SelfComparison(Check):
    """A comparison of a column with itself."""

    id = "self_comparison"
    order = 85

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        dialect = analysis.schema.dialect
        for comparison, _ in analysis.scoped_nodes(*COMPARISONS):
            left, right = comparison.left, comparison.right
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) and left.name \
                    and left.sql().lower() == right.sql().lower():
                yield self.error(f"{comparison.sql(dialect=dialect)} compares {left.name} with itself, which holds "
                                 "on every row alike: compare it with the value or the other table's column meant "
                                 "(a share of each group is its count over the count of all rows)")
                return
