"""What varies by SQL dialect, as data or through sqlglot: how a dialect is named in prompts, how it quotes a name
and how it reads a column type."""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import SqlglotError

DIALECT_LABELS = {
    "sqlite": "SQLite",
    "duckdb": "DuckDB SQL",
    "postgres": "PostgreSQL",
    "bigquery": "BigQuery GoogleSQL",
}


def dialect_label(dialect: str) -> str:
    return DIALECT_LABELS.get(dialect, dialect)


def quoted(name: str, dialect: str) -> str:
    """A table or column name quoted as `dialect` quotes it: names read from a database may be keywords or hold
    any character, so statements askchain builds from them always quote."""
    return exp.to_identifier(name, quoted=True).sql(dialect=dialect)


#: Dialects whose clients quote a table path once, whole (BigQuery's `project.dataset.table`); the others quote each
#: part of `schema.table` on its own, and only where it needs quoting.
QUOTES_WHOLE_PATH = {"bigquery"}


def qualified_table(name: str, dialect: str) -> str:
    """A dotted table name (`project.dataset.table`, `schema.table`) as `dialect`'s own clients write it."""
    if dialect in QUOTES_WHOLE_PATH:
        return quoted(name, dialect)
    return exp.to_table(name, dialect=dialect).sql(dialect=dialect)


@lru_cache(maxsize=4096)  # bounded: one entry per distinct (type text, dialect) pair of the schemas seen
def column_type(type_text: str, dialect: str) -> exp.DataType:
    """A column's declared type as sqlglot reads it in the database's dialect (GoogleSQL's ARRAY<STRUCT<...>>,
    DuckDB's VARCHAR[], SQLite's `number`); UNKNOWN when there is none or sqlglot cannot read it (SQLite takes any
    words as a type). Callers must not modify the result: it is shared."""
    if not type_text or not type_text.strip():
        return exp.DataType.build("UNKNOWN")
    try:
        return exp.DataType.build(type_text, dialect=dialect, udt=True)
    except (SqlglotError, ValueError):
        return exp.DataType.build("UNKNOWN")


def is_numeric(type_text: str, dialect: str) -> bool:
    return column_type(type_text, dialect).is_type(*exp.DataType.NUMERIC_TYPES)
