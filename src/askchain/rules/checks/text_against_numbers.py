"""A number column compared with a word (`flights.Airline = 'United Airlines'`, where Airline is the airline's id): the
query runs and finds nothing, or everything, so it is sent back with the text columns of that name."""

from __future__ import annotations

from typing import Iterator

from askchain.db.dialects import is_numeric
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.sql import COMPARISONS, is_word


class TextAgainstNumbers(Check):
    """A number column compared with a word."""

    id = "text_against_numbers"
    order = 110

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        schema = analysis.schema
        for table, col, word, tables in analysis.compared_columns(*COMPARISONS):
            if not is_word(word) or not is_numeric(col.type, schema.dialect):
                continue
            text_columns = [(t, c) for t in schema.tables for c in t.columns
                            if c.name.lower() == col.name.lower() and not is_numeric(c.type, schema.dialect)]
            hint = ""
            if text_columns:
                other, text_column = text_columns[0]
                joined = {t.name.lower() for t in tables.values()}
                hint = (f"; filter on {other.name}.{text_column.name} instead"
                        + ("" if other.name.lower() in joined else f" (join {other.name})"))
            yield self.error(f"{table.name}.{col.name} holds numbers ({col.type}), not text like '{word}'{hint}")
            return  # one such finding is enough to send the query back
