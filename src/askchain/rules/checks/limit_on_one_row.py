"""A LIMIT on a SELECT of aggregates only, without GROUP BY (`SELECT SUM(eth_balance) FROM balances ORDER BY
eth_balance DESC LIMIT 100`): aggregation comes first and leaves one row, so the query sums every row where the top
100 were meant. The rows to aggregate are taken in a subquery. LIMIT 1 keeps the one row: harmless bare, or on a MIN
or MAX (`MAX(x) ... ORDER BY x DESC LIMIT 1` is still the largest)."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import owned_by, owned_nodes


class LimitOnOneRow(Check):
    """A LIMIT meant for the rows an aggregate reads, applied to its one row."""

    id = "limit_on_one_row"
    order = 50

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for select in tree.find_all(exp.Select):
            limit = select.args.get("limit")
            if select.args.get("group") or not isinstance(limit, exp.Limit) or not limit.expression.is_int \
                    or not all(owned_by(select, p, exp.AggFunc) for p in select.expressions):
                continue
            extremes = all(isinstance(agg, (exp.Min, exp.Max))
                           for p in select.expressions for agg in owned_nodes(select, p, exp.AggFunc))
            if limit.expression.to_py() == 1 and (extremes or not select.args.get("order")):
                continue
            yield self.error(
                f"{select.expressions[0].sql(dialect=dialect)} is aggregated over all rows into one row before "
                f"{limit.sql(dialect=dialect)} applies: to aggregate only those rows, take them in a subquery first, "
                f"SELECT SUM(x) FROM (SELECT x FROM t ORDER BY x DESC {limit.sql(dialect=dialect)})")
            return
