"""A field the records of an UNNESTed struct array lack (`w.timestamp` for `UNNEST(withdrawals) AS w`: the block's time
is blocks.timestamp): qualification leaves struct fields unchecked, and the database's error names no field the
records have."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.rules.analysis import Analysis, Records, records_read
from askchain.rules.base import Check, Finding


class RecordFields(Check):
    """A field the records of an UNNESTed struct array lack."""

    id = "record_fields"
    order = 150

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for dot, tables in analysis.scoped_nodes(exp.Dot):
            records = records_read(dot, tables)
            if isinstance(records, Records) and records.column(dot.name) is None:
                yield self.error(records.lacks(dot.this.name, dot.name))
                return
