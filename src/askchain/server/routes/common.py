"""What several routers share: the path parameters' patterns, JSON for row values, package versions."""

from __future__ import annotations

import datetime as dt
import decimal
from importlib import metadata
from typing import Any

THREAD_ID = r"^[A-Za-z0-9_-]{1,64}$"
DB_NAME = r"^[A-Za-z0-9_.-]{1,100}$"


def json_default(value: Any) -> Any:
    """Row values JSON does not know: numbers stay numbers, times become ISO text, bytes hex."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return str(value)


def version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
