"""Database layer: engines with introspection and a safe, read-only executor.

The names below load on first use, so a query worker (askchain.db.worker), which imports only what it runs queries
with, does not load sqlglot and the settings.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askchain.db.base import Engine, QueryResult
    from askchain.db.connect import open_database
    from askchain.db.schema import Column, ForeignKey, Schema, Table

__all__ = ["Column", "Engine", "ForeignKey", "QueryResult", "Schema", "Table", "open_database"]

_LAZY = {"Engine": "askchain.db.base", "QueryResult": "askchain.db.base", "open_database": "askchain.db.connect",
         "Column": "askchain.db.schema", "ForeignKey": "askchain.db.schema", "Schema": "askchain.db.schema",
         "Table": "askchain.db.schema"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'askchain.db' has no attribute '{name}'")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
