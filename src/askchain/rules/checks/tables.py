"""A table the schema lacks (a CTE's name aside): the query cannot run, and the finding names close tables."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import did_you_mean


class UnknownTables(Check):
    """A table the schema lacks: nothing after it can resolve the query's names, so the checks that read names stop here."""

    id = "tables"
    order = 10
    gate = True

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, schema = analysis.written, analysis.schema
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            if not isinstance(table.this, exp.Identifier):
                continue
            name = ".".join(p.name for p in table.parts)
            if table.name.lower() not in ctes and schema.table(name) is None:
                yield self.error(f"table {name} does not exist" + did_you_mean(table.name, [t.name for t in schema.tables]),
                             name)
