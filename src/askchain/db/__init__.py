"""Database layer: engines with introspection and a safe, read-only executor.

The names below load on first use, so a query worker (askchain.db.worker), which imports only what it runs queries
with, does not load sqlglot and the settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from askchain.lazy import lazy_exports

if TYPE_CHECKING:
    from askchain.db.base import Engine, QueryResult
    from askchain.db.connect import open_database
    from askchain.db.schema import Column, ForeignKey, Schema, Table

__all__ = ["Column", "Engine", "ForeignKey", "QueryResult", "Schema", "Table", "open_database"]

__getattr__ = lazy_exports(__name__, {
    "Engine": "askchain.db.base", "QueryResult": "askchain.db.base", "open_database": "askchain.db.connect",
    "Column": "askchain.db.schema", "ForeignKey": "askchain.db.schema", "Schema": "askchain.db.schema",
    "Table": "askchain.db.schema",
})
