"""What varies by SQL dialect, as data or through sqlglot: how a dialect is named in prompts, how it quotes a name,
how it reads a column type; and parsing SQL in a dialect with every parser failure as a ParseError."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from askchain.errors import describe

DIALECT_LABELS = {
    "sqlite": "SQLite",
    "duckdb": "DuckDB SQL",
    "postgres": "PostgreSQL",
    "bigquery": "BigQuery GoogleSQL",
}


def dialect_label(dialect: str) -> str:
    return DIALECT_LABELS.get(dialect, dialect)


def parse_statements(sql: str, dialect: str | None = None) -> list[exp.Expression]:
    """The statements of `sql` (see `parse_one`)."""
    with _parser_failures_as_parse_errors(dialect):
        return [statement for statement in sqlglot.parse(sql, read=dialect) if statement is not None]


def parse_one(sql: str, dialect: str | None = None) -> exp.Expression | None:
    """sqlglot's `parse_one`, except that every failure is a ParseError: sqlglot's parser fails on some malformed SQL
    with an exception of its own making (`DATE_SUB(x)` raises AttributeError), and SQL a model wrote must be
    handled one way wherever it is parsed, never stop a question."""
    with _parser_failures_as_parse_errors(dialect):
        return sqlglot.parse_one(sql, read=dialect)


@contextmanager
def _parser_failures_as_parse_errors(dialect: str | None):
    try:
        with _QUIET_PARSING.active():
            yield
    except SqlglotError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the parser raised on this text
        raise ParseError(f"cannot parse this as {dialect or 'SQL'}: {describe(exc)}") from exc


class _QuietWhileParsing(logging.Filter):
    """Drops sqlglot's log records on a thread while it parses here: what parsing found reaches the user as a parse
    error or a refusal, never as a stray warning line before it ("contains unsupported syntax. Falling back to
    parsing as a 'Command'"). Other threads, and sqlglot outside these parses, log as before."""

    def __init__(self):
        super().__init__()
        self._parsing = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self._parsing, "depth", 0)

    @contextmanager
    def active(self):
        self._parsing.depth = getattr(self._parsing, "depth", 0) + 1
        try:
            yield
        finally:
            self._parsing.depth -= 1


_QUIET_PARSING = _QuietWhileParsing()
logging.getLogger("sqlglot").addFilter(_QUIET_PARSING)


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


#: Per dialect, the functions other dialects take a date part with (DuckDB's and MySQL's `DAYOFWEEK(ts)`,
#: `YEAR(ts)`) that this one lacks, and the part its EXTRACT takes instead. BigQuery rejects the calls, and the local
#: DuckDB copy runs them with DuckDB's numbering (DAYOFWEEK 0-6 from Sunday, where GoogleSQL's is 1-7).
EXTRACT_PARTS: dict[str, dict[str, str]] = {
    "bigquery": {"DAYOFWEEK": "DAYOFWEEK", "DAYOFMONTH": "DAY", "DAYOFYEAR": "DAYOFYEAR", "WEEKOFYEAR": "ISOWEEK",
                 "YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "DAY": "DAY", "HOUR": "HOUR",
                 "MINUTE": "MINUTE", "SECOND": "SECOND"},
}
#: Dialects that reject a non-aggregated column beside an aggregate without GROUP BY (SQLite accepts it).
STRICT_GROUP_BY = frozenset({"bigquery", "postgres", "duckdb"})
#: How each dialect tests an array for an element and counts its elements, for a finding's fix.
ARRAY_IDIOMS = {
    "bigquery": ("'x' IN UNNEST({col})", "ARRAY_LENGTH({col})"),
    "duckdb": ("list_contains({col}, 'x')", "len({col})"),
    "postgres": ("'x' = ANY({col})", "cardinality({col})"),
}
