"""An amount compared with a figure that is none of the question's amounts in the scales it writes amounts in, when it
writes one (`value > 1000000000000000` for "more than 10 ETH", a power of ten off; `value / 1e9 > 10`, gwei for
ETH): the filter keeps other rows, and nothing else looks wrong. A figure of almost nothing is left to the check
that names that."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from askchain.rules.amounts import UnitRule, figures_not_given
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import unqualified_sql


@dataclass(frozen=True)
class FiguresNotGiven(UnitRule, Check):
    """An amount compared with none of the question's amounts (a domain instantiates it with its units)."""

    id = "figures_not_given"
    order = 180

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, schema, units, question = analysis.tree, analysis.schema, self.units, analysis.asked
        for found in figures_not_given(tree, schema, units, question):
            unit = found.unit
            if unit.least_meant is not None and abs(found.meant) < unit.least_meant and not unit.asked_in(question):
                continue  # almost nothing: the check of tiny figures names it
            number, word = found.closest
            yield self.error(
                f"{unqualified_sql(found.comparison, schema.dialect)} compares {found.column} ({unit.name}) with "
                f"{found.meant / unit.scales[word]:g} {word}, none of the amounts the question gives "
                f"({', '.join(f'{n} {w}' for n, w in found.given)}); {number} {word} is "
                f"{unqualified_sql(found.as_given(), schema.dialect)}")
            return  # one such finding is enough to send the query back
