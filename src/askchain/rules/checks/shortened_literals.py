"""A literal copied from the schema prompt's shortened example value ('0x00000000000000ad…'): no stored value ends so,
so the filter finds nothing."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.db.schema import SHORTENED
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class ShortenedLiterals(Check):
    """A literal copied from a shortened example value of the schema prompt."""

    id = "shortened_literals"
    order = 210

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree = analysis.written
        for literal in tree.find_all(exp.Literal):
            if literal.is_string and literal.this.endswith(SHORTENED):
                yield self.error(f"'{literal.this}' is a shortened example from the schema, not a stored value: "
                                       "use the full value (or the name it stands for) or drop the filter")
                return
