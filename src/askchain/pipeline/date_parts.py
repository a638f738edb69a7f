"""A date part taken with a function the query's dialect lacks is written as the dialect's EXTRACT.

The 1.5B model sometimes writes DuckDB's or MySQL's `DAYOFWEEK(block_timestamp)` or `YEAR(ts)` in GoogleSQL. BigQuery
rejects the call, and the local DuckDB copy runs it with DuckDB's own numbering (days of the week 0-6), so the query
answers with other numbers than it would as `EXTRACT(DAYOFWEEK FROM block_timestamp)` (1-7), which is what it means
and what runs on BigQuery. The dialect's table (`EXTRACT_PARTS`) says which calls and parts."""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from askchain.db.dialects import EXTRACT_PARTS
from askchain.generation.sql_text import apply_edits, call_arguments


def extract_date_parts(sql: str, dialect: str) -> tuple[str, list[str]]:
    """`sql` with each one-argument call of a date-part function `dialect` lacks written as its EXTRACT, and what was
    rewritten ("DAYOFWEEK(timestamp) written as EXTRACT(DAYOFWEEK FROM timestamp)"); a qualified name (`t.year`) or a
    call of another arity is left as written."""
    parts = EXTRACT_PARTS.get(dialect, {})
    if not parts or not any(name in sql.upper() for name in parts):
        return sql, []
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return sql, []
    edits = []
    for i, token in enumerate(tokens):
        part = parts.get(token.text.upper()) if token.token_type == TokenType.VAR else None
        if part is None or i and tokens[i - 1].token_type == TokenType.DOT:
            continue
        call = call_arguments(sql, tokens, i)
        if call is None or len(call[0]) != 1 or not call[0][0]:
            continue
        (argument,), end = call
        text = f"EXTRACT({part} FROM {argument})"
        edits.append((token.start, end, text, f"{' '.join(sql[token.start:end + 1].split())} written as {text}"))
    return apply_edits(sql, edits)
