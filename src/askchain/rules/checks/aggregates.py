"""An aggregate beside a plain column in a SELECT without GROUP BY. Only the SELECT's own aggregates and columns count:
those of a scalar subquery (`(SELECT SUM(x) FROM t WHERE t.a = r.a)`) or a window belong elsewhere."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.db.dialects import STRICT_GROUP_BY
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import owned_by


class AggregatesBesideColumns(Check):
    """An aggregate beside a plain column without GROUP BY: an error where the dialect rejects it."""

    id = "aggregates"
    order = 40

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for select in tree.find_all(exp.Select):
            if select.args.get("group"):
                continue
            projections = select.expressions
            has_agg = any(owned_by(select, p, exp.AggFunc) for p in projections)
            plain = [p for p in projections if not owned_by(select, p, exp.AggFunc) and owned_by(select, p, exp.Column)]
            if has_agg and plain:
                message = f"aggregate beside non-aggregated {plain[0].sql(dialect=dialect)} without GROUP BY"
                yield self.error(message) if dialect in STRICT_GROUP_BY else self.warning(message)
