"""A result column showing an amount in its base unit (`SELECT eth_balance`, `SUM(value)`): the user reads 4.2e21 where
4,200 ETH was meant, and the answer compares badly with any figure in ETH. The finding names the conversion. Only
the outer query's columns are judged; a division or any other function takes the amount out of its unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from askchain.rules.amounts import UnitRule, amounts_in_base_units
from askchain.rules.analysis import Analysis, result_scopes
from askchain.rules.base import Check, Finding


@dataclass(frozen=True)
class RawAmounts(UnitRule, Check):
    """A result column showing an amount in its base unit, unless the question asks for that unit (a domain instantiates it with its units)."""

    id = "raw_amounts"
    order = 160

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree = analysis.tree
        shown_units = self.shown_units(analysis.asked)
        root = analysis.root(tree)
        if root is None:
            return
        for scope in result_scopes(root):
            tables = analysis.tables(scope)
            for projection in scope.expression.selects:
                for name, column, unit in amounts_in_base_units(projection, tables, shown_units):
                    yield self.error(f"{name} is in {unit.how_shown(column.name)}")
                    return  # one such finding is enough to send the query back
