"""The read-only guard: decides on the parsed sqlglot tree whether a statement may run.

Admitted: exactly one query (SELECT, WITH, set operations, VALUES) that reads only tables of the
database. Refused: any write, DDL, session or transaction statement wherever it hides (a DELETE in a
CTE is still a write), statements sqlglot cannot fully parse, table functions and path-like table names
that reach the file system, and functions that read files, the environment or run SQL text.
The engines add a second, independent barrier (read-only connections, authorizers, no external access).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from askchain.db.dialects import parse_statements
from askchain.errors import QueryRefused, describe, first_line

# Statement kinds that change data, schema, session or transaction state, or touch files.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable", "Command",
        "Pragma", "Set", "Use", "Transaction", "Commit", "Rollback", "Copy", "Attach", "Detach", "Install",
        "LoadData", "Analyze", "Into", "Grant", "Revoke", "Describe", "Summarize", "Refresh", "Cache",
        "Uncache", "Export", "Kill", "Lock",
    )
    if hasattr(exp, name)
)

# Table-valued functions a query may use in FROM: they compute rows and touch nothing else.
_ALLOWED_TABLE_FUNCTIONS = (exp.GenerateSeries, exp.Unnest, exp.Explode, exp.ExplodeOuter, exp.Posexplode)

# Functions that read files, the environment or the catalogue of other databases, or run SQL text.
_FORBIDDEN_FUNCTION = re.compile(
    r"^(read_\w+|\w+_scan|scan_\w+|glob|getenv|current_setting|query|query_table|sniff_csv|parquet_\w+"
    r"|iceberg_\w+|delta_\w+|load_extension|readfile|writefile|edit|fsdir|sqlite_attach|duckdb_\w+"
    r"|pg_read_\w+|pg_ls_dir|pg_stat_file|lo_\w+|dblink\w*|set_config|nextval|setval|pg_terminate_backend"
    r"|pg_cancel_backend|pg_reload_conf|pg_advisory\w*|external_query|ml\.\w+)$",
    re.IGNORECASE,
)

_PATH_LIKE = re.compile(r"[/\\:]|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|db|duckdb|sqlite\d?|xlsx|arrow|avro)$", re.I)


def check_read_only(sql: str, dialect: str) -> exp.Expression:
    """Return the parsed statement if it is a safe read-only query; raise QueryRefused otherwise, also when the
    check itself fails (a parser bug on odd input): the guard fails closed."""
    try:
        return _check(sql, dialect)
    except QueryRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, the statement was not shown to be safe
        raise QueryRefused(f"cannot check the SQL as {dialect}: {describe(exc)}") from exc


def _check(sql: str, dialect: str) -> exp.Expression:
    if not sql or not sql.strip():
        raise QueryRefused("empty SQL statement")
    try:
        statements = parse_statements(sql, dialect)
    except (ParseError, TokenError) as exc:
        raise QueryRefused(f"cannot parse the SQL as {dialect}: {first_line(exc)}") from exc
    if len(statements) != 1:
        raise QueryRefused(f"exactly one statement is allowed, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, (exp.Query, exp.Values)):
        raise QueryRefused(f"only read-only queries are allowed, not {_kind(tree)}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise QueryRefused(f"only read-only queries are allowed: found {_kind(node)}")
        if isinstance(node, exp.Table):
            _check_table_source(node)
        elif isinstance(node, exp.Func):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if _FORBIDDEN_FUNCTION.match(name or ""):
                raise QueryRefused(f"function {name}() is not allowed: it can reach files, settings or other databases")
    return tree


def _check_table_source(table: exp.Table) -> None:
    source = table.this
    if isinstance(source, exp.Func) and not isinstance(source, _ALLOWED_TABLE_FUNCTIONS):
        name = source.name if isinstance(source, exp.Anonymous) else source.sql_name()
        raise QueryRefused(f"table function {name}() is not allowed: queries may read only the database's tables")
    if isinstance(source, exp.Literal) or (isinstance(source, exp.Identifier) and _PATH_LIKE.search(source.name)):
        raise QueryRefused(f"reading files is not allowed: {source.sql()}")


def _kind(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return f"{str(node.this).upper()} command"
    return node.key.upper()
