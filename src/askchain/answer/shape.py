"""What a result's columns are, read from their names and values: measures (numbers), labels (text) and a time axis.
The chart and the answer in words both choose by these, so the CLI, the web UI and the words agree."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Any, Sequence

_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([+-]\d{2}:?\d{2}|Z| UTC)?$")
_TIME_NAME = re.compile(r"(^|_)(date|day|week|month|year|hour|time|timestamp|ts|period)s?($|_)", re.IGNORECASE)
_ID_NAME = re.compile(r"(^|_)id$", re.IGNORECASE)


def column(rows: Sequence[Sequence[Any]], index: int) -> list[Any]:
    """The column's values, NULLs left out."""
    return [r[index] for r in rows if r[index] is not None]


def is_numeric(values: list[Any]) -> bool:
    return bool(values) and all(isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) for v in values)


def is_time(name: str, values: list[Any]) -> bool:
    """Dates, ISO date strings, or whole numbers under a time-like name (years, months, hours, block timestamps)."""
    if not values:
        return False
    if all(isinstance(v, (dt.date, dt.datetime)) for v in values):
        return True
    if all(isinstance(v, str) and _ISO_DATE.match(v.strip()) for v in values):
        return True
    return bool(_TIME_NAME.search(name)) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def numeric_columns(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    return [i for i in range(len(columns)) if is_numeric(column(rows, i))]


def measures(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Numeric columns worth stating or plotting: ids are numbers but not measures."""
    return [i for i in numeric_columns(columns, rows) if not _ID_NAME.search(columns[i])]


def labels(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Columns that name things (text, booleans, dates): everything not numeric."""
    numeric = numeric_columns(columns, rows)
    return [i for i in range(len(columns)) if i not in numeric]


def time_order(value: Any) -> Any:
    """A sort key for a time axis: dates and datetimes compare as ISO text, like the strings beside them."""
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


#: Hex strings (addresses, hashes) at least this long are shortened to their head and tail where they are read.
_LONG_HEX = re.compile(r"^0x[0-9a-fA-F]{16,}$")
#: Any other text longer than this is cut.
LABEL_CHARS = 60


def shorten(text: str) -> str:
    """A label as a reader scans it: 0xea674fdde714fd979de3edf0f56aa9716b898ec8 -> 0xea67…8ec8. The table keeps it whole."""
    if _LONG_HEX.match(text):
        return f"{text[:6]}…{text[-4:]}"
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
