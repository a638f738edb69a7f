"""`x OR y AND z` is `x OR (y AND z)`: AND binds first, so a filter meant for both (a time window after an OR of two
kinds) holds for one side only, and the query counts the other side over the whole table. Two alternatives that are
each an AND (`a AND b OR c AND d`) are the idiom, and left alone."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class AndOrPrecedence(Check):
    """`x OR y AND z`, where the AND was meant for both alternatives."""

    id = "and_or_precedence"
    order = 90

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for node in tree.find_all(exp.Or):
            sides = (node.this, node.expression)
            if sum(isinstance(side, exp.And) for side in sides) == 1:
                read = exp.or_(*(exp.paren(side, copy=True) if isinstance(side, exp.And) else side for side in sides))
                yield self.error(f"{node.sql(dialect=dialect)} reads as {read.sql(dialect=dialect)} (AND binds "
                                       "before OR): put the alternatives in parentheses, (x OR y) AND z, so the other "
                                       "conditions hold for every alternative")
                return
