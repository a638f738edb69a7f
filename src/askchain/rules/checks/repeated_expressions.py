"""Two output columns named differently but computing the same thing (`COUNT(*) AS above, COUNT(*) AS below`): the
query meant two quantities and computes one twice, so its rows look plausible and can still win a vote."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class RepeatedExpressions(Check):
    """One expression under two names: the query computes one of two quantities twice."""

    id = "repeated_expressions"
    order = 60

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for select in tree.find_all(exp.Select):
            named: dict[str, str] = {}
            for projection in select.expressions:
                if not isinstance(projection, exp.Alias):
                    continue
                expression = projection.this.sql(dialect=dialect)
                first = named.setdefault(expression, projection.alias)
                if first.lower() != projection.alias.lower():
                    yield self.error(f"columns {first} and {projection.alias} both compute {expression}: "
                                           "make each compute what its name says")
                    break
