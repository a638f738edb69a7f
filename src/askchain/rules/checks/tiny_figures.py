"""An amount in its base unit compared with a figure meant in a larger one (`eth_balance > 1000` for "more than 1,000
ETH", `gas_price > 50` for 50 gwei): the filter keeps almost every row, and the answer looks plausible. A positive
figure below the unit's least meant amount is such a figure; zero or less is a real bound (`value > 0`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from askchain.rules.amounts import WEIGHINGS, UnitRule, amounts_in_base_units
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import literal_number, unqualified_sql, weighed


@dataclass(frozen=True)
class TinyFigures(UnitRule, Check):
    """An amount in its base unit compared with a figure meant in a larger one (a domain instantiates it with its units)."""

    id = "tiny_figures"
    order = 170

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        schema = analysis.schema
        shown_units = self.shown_units(analysis.asked)
        for comparison, tables in analysis.scoped_nodes(*WEIGHINGS):
            for amount, figure in weighed(comparison):
                number = literal_number(figure)
                if number is None or number <= 0:
                    continue
                for name, column, unit in amounts_in_base_units(amount, tables, shown_units):
                    if unit.least_meant is not None and number < unit.least_meant:
                        yield self.error(
                            f"{unqualified_sql(comparison, schema.dialect)} compares {name}, an amount in {unit.name}, "
                            f"with {figure.sql(dialect=schema.dialect)} {unit.name}, almost nothing: convert the column "
                            f"to the figure's unit ({unit.conversion(column.name)})")
                        return  # one such finding is enough to send the query back
