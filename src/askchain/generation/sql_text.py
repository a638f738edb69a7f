"""Pull the SQL out of a model's reply and normalise it for de-duplication."""

from __future__ import annotations

import re

import sqlglot
from sqlglot.errors import SqlglotError

_FENCE = re.compile(r"```(?:sql|googlesql|sqlite|duckdb)?\s*\n?(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)
_START = re.compile(r"\b(WITH|SELECT)\b", re.IGNORECASE)


def extract_sql(reply: str) -> str:
    """The SQL in a reply: the last fenced block if any, else the text from the first SELECT/WITH on."""
    blocks = [b.strip() for b in _FENCE.findall(reply) if b.strip()]
    text = blocks[-1] if blocks else reply
    if not blocks:
        match = _START.search(text)
        text = text[match.start():] if match else text
    text = text.strip()
    # Keep one statement: models sometimes append explanations or a second query after a semicolon.
    if ";" in text:
        text = text[: text.index(";")] if _balanced_quotes(text[: text.index(";")]) else text
    return text.strip()


def _balanced_quotes(text: str) -> bool:
    return text.count("'") % 2 == 0 and text.count('"') % 2 == 0


def normalize_sql(sql: str, dialect: str) -> str:
    """A canonical form for de-duplicating candidates; falls back to whitespace-collapsed text."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        return tree.sql(dialect=dialect, normalize=True, pretty=False)
    except SqlglotError:
        return " ".join(sql.split()).lower()
