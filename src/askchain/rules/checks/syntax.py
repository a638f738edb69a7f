"""SQL sqlglot cannot parse is a syntax error, whatever the parser raised (the guard would refuse the query anyway);
an empty text is no query. Nothing after it can read the tree."""

from __future__ import annotations

from typing import Iterator

from sqlglot.errors import SqlglotError

from askchain.errors import first_line
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class Syntax(Check):
    """A query that does not parse, or is empty."""

    id = "syntax"
    order = 0
    gate = True

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        try:
            written = analysis.written
        except SqlglotError as exc:
            yield self.error(f"syntax error: {first_line(exc)}")
            return
        if written is None:
            yield Finding(self.id, "empty query", kind="empty")
