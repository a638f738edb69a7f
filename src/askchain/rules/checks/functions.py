"""A function the engine does not have (where the caller knows the engine's functions): the query cannot run."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding


class UnknownFunctions(Check):
    """A call of a function not among the engine's known functions."""

    id = "functions"
    order = 30

    def applies(self, analysis: Analysis) -> bool:
        return analysis.known_functions is not None

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, known_functions = analysis.written, analysis.known_functions
        for func in tree.find_all(exp.Anonymous):
            if func.name.lower() not in known_functions:
                yield self.error(f"function {func.name}() does not exist")
