"""A share of the rows the filter keeps (see `shares_of_the_filter`): it runs and looks like an answer, and can win a
vote."""

from __future__ import annotations

from typing import Iterator

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.filtered_shares import shares_of_the_filter


class SharesOfTheFilter(Check):
    """A share among rows WHERE already narrowed to those it counts: always 1."""

    id = "shares_of_the_filter"
    order = 70

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect = analysis.written, analysis.schema.dialect
        for found in shares_of_the_filter(tree, dialect):
            written = " and ".join(condition.sql(dialect=dialect) for condition, _ in found.restated)
            where = found.restated[0][1]
            yield self.error(f"{found.share.sql(dialect=dialect)} is always 100 % of the rows: {where} keeps only "
                                   f"rows with {written}; take {written} out of {where} so the share is of all rows")
            return
