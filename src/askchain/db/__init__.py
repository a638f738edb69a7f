"""Database layer: engines with introspection and a safe, read-only executor."""

from askchain.db.base import Engine, QueryResult
from askchain.db.connect import open_database
from askchain.db.schema import Column, ForeignKey, Schema, Table

__all__ = ["Column", "Engine", "ForeignKey", "QueryResult", "Schema", "Table", "open_database"]
