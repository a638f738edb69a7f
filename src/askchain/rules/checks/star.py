"""SELECT * returns every column where the question asked for some: a warning, since the rows may still answer."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class SelectStar(Check):
    """SELECT * in the outer query."""

    id = "star"
    order = 200

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree = analysis.written
        if any(isinstance(s, exp.Star) for s in (tree.selects if isinstance(tree, exp.Select) else [])):
            yield self.warning("SELECT * returns every column; select only the columns asked for")
