"""`x / 1` is x: a share or ratio written without its whole (`SAFE_DIVIDE(COUNTIF(c), 1)`) runs and shows a count where
a fraction was asked. `x / 1.0` is left alone (it makes an integer a real in SQLite and Postgres), as is a quotient
divided again (`SUM(x) / 1 / COUNT(*)`)."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import quotient


class DivisionByOne(Check):
    """A division by 1: a share written without its whole."""

    id = "division_by_one"
    order = 80

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for node in tree.find_all(exp.Div, exp.SafeDivide, exp.Anonymous):
            parts = quotient(node)
            whole = parts[1].unnest() if parts else None
            divided_again = isinstance(node.parent, (exp.Div, exp.SafeDivide)) and node.parent.this is node
            if isinstance(whole, exp.Literal) and whole.is_int and whole.this == "1" and not divided_again:
                yield self.error(f"{node.sql(dialect=dialect)} divides by 1, which changes nothing: divide by the "
                                       "whole the part is taken of (for a share of rows, COUNT(*))")
                return
