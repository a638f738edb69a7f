"""Database values and error messages as prompt text: quoted, escaped and capped, so that what the data says stays
data. A stored value with a newline could otherwise end a comment line or a table row and read as an instruction
or a row of the prompt's own; every value from the database, and every error message, goes through here."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from typing import Any, Callable

#: Marks a value cut short in a prompt (validation refuses it inside a literal). Defined here rather than with the
#: schema's renderings, which quote their example values with this module.
SHORTENED = "…"
#: Characters of a value shown before it is cut, marked with SHORTENED (which validation refuses inside a literal, so
#: a cut value is never queried as if whole).
MAX_DATA_CHARS = 200
#: An error message keeps more: a database's message with the names it suggests instead.
MAX_ERROR_CHARS = 500

# Every character that ends a line (str.splitlines' set) or is not printable text: C0 and C1 controls, DEL, and the
# Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Those that json.dumps(ensure_ascii=False) leaves as they are.
_LEFT_BY_JSON = re.compile("[\x7f-\x9f\u2028\u2029]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def escape_text(text: str) -> str:
    """`text` on one line: line breaks and control characters written as JSON's backslash escapes (`\\n`,
    `\\u0085`), everything else as it is. Escaped text has none left, so escaping twice changes nothing."""
    return _CONTROL.sub(_escape, text)


def quote_data(value: Any, limit: int = MAX_DATA_CHARS) -> str:
    """A value as a JSON string: in double quotes, its quotes, backslashes and line breaks escaped, cut to `limit`
    characters; nothing in it can end the string or the line it stands on."""
    quoted = json.dumps(_capped(str(value), limit), ensure_ascii=False)
    return _LEFT_BY_JSON.sub(_escape, quoted)


def quote_error(message: str) -> str:
    """A database's (or askchain's) error message as a quoted string: it may repeat stored values or the query's
    text, so it is shown as data too."""
    return quote_data(message, MAX_ERROR_CHARS)


def sql_string(value: Any, limit: int = MAX_DATA_CHARS) -> str:
    """A value as a SQL string literal, for where the model is to copy it into a query (value hints, earlier steps'
    results): in single quotes, its quotes doubled, its line breaks escaped, cut to `limit` characters. A plain value
    reads exactly as the query must write it; double quotes would name a column in most dialects."""
    return "'" + escape_text(_capped(str(value), limit)).replace("'", "''") + "'"


def data_cell(value: Any, limit: int = MAX_DATA_CHARS, *, quote: Callable[[Any, int], str] = quote_data,
              number: Callable[[Any], str] = str) -> str:
    """A result cell as prompt text: NULL, a number (written by `number`), a flag or a date as they are; anything
    else (text, bytes, JSON) as a quoted string, so a text cell cannot pass for a number, a row or an instruction."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return number(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return str(value)
    return quote(value, limit)


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + SHORTENED


def _escape(found: re.Match) -> str:
    char = found.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"
