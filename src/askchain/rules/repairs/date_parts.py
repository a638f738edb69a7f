"""A date part taken with a function the query's dialect lacks is written as the dialect's EXTRACT.

The 1.5B model sometimes writes DuckDB's or MySQL's `DAYOFWEEK(block_timestamp)` or `YEAR(ts)` in GoogleSQL. BigQuery
rejects the call, and the local DuckDB copy runs it with DuckDB's own numbering (days of the week 0-6), so the query
answers with other numbers than it would as `EXTRACT(DAYOFWEEK FROM block_timestamp)` (1-7), which is what it means
and what runs on BigQuery. The dialect's table (`EXTRACT_PARTS`) says which calls and parts."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from askchain.db.dialects import EXTRACT_PARTS
from askchain.generation.sql_text import apply_edits, named_calls
from askchain.rules.analysis import Analysis
from askchain.rules.base import Repair, Repaired


def extract_date_parts(sql: str, dialect: str) -> tuple[str, list[str]]:
    """`sql` with each one-argument call of a date-part function `dialect` lacks written as its EXTRACT, and what was
    rewritten ("DAYOFWEEK(timestamp) written as EXTRACT(DAYOFWEEK FROM timestamp)"); a qualified name (`t.year`) or a
    call of another arity is left as written."""
    parts = EXTRACT_PARTS.get(dialect, {})
    tokens, calls = named_calls(sql, dialect, parts)
    edits = []
    for call in calls:
        qualified = call.index and tokens[call.index - 1].token_type == TokenType.DOT
        if qualified or len(call.arguments) != 1 or not call.arguments[0]:
            continue
        text = f"EXTRACT({parts[call.name]} FROM {call.arguments[0]})"
        edits.append((call.start, call.end, text, f"{' '.join(sql[call.start:call.end + 1].split())} written as {text}"))
    return apply_edits(sql, edits)


class ExtractDateParts(Repair):
    """A date part taken with a function the dialect lacks, written as its EXTRACT."""

    id = "date_parts"
    order = 20

    def repair(self, analysis: Analysis) -> Repaired:
        return extract_date_parts(analysis.sql, analysis.dialect)
