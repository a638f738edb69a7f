"""The read-only guard: decides on the parsed sqlglot tree whether a statement may run.

Admitted: exactly one query (SELECT, WITH, set operations, VALUES) that reads only tables of the database. Refused: any
write, DDL, session or transaction statement wherever it hides (a DELETE in a CTE is still a write), statements
sqlglot cannot fully parse, table functions and path-like table names that reach the file system, and functions that
read files, the environment or run SQL text. On PostgreSQL, where a privileged role makes the guard the only barrier,
functions are an allow-list (guard_postgres.yaml) decided on the name the server resolves, and the system catalogs
cannot be read. The engines add a second, independent barrier (read-only connections, authorizers, no external access).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

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
# How a refusal names a statement kind whose sqlglot name is not what a person writes.
_KIND_NAMES = {"truncatetable": "TRUNCATE", "loaddata": "LOAD DATA", "into": "SELECT ... INTO", "transaction": "BEGIN"}

# Table-valued functions a query may use in FROM: they compute rows and touch nothing else.
_ALLOWED_TABLE_FUNCTIONS = (exp.GenerateSeries, exp.Unnest, exp.Explode, exp.ExplodeOuter, exp.Posexplode)

# Dialects without an allow-list: functions that read files, the environment or the catalogue of other databases,
# or run SQL text.
_FORBIDDEN_FUNCTION = re.compile(
    r"^(read_\w+|\w+_scan|scan_\w+|glob|getenv|current_setting|query|query_table|sniff_csv|parquet_\w+"
    r"|iceberg_\w+|delta_\w+|load_extension|readfile|writefile|edit|fsdir|sqlite_attach|duckdb_\w+"
    r"|pg_read_\w+|pg_ls_dir|pg_stat_file|lo_\w+|dblink\w*|set_config|nextval|setval|pg_terminate_backend"
    r"|pg_cancel_backend|pg_reload_conf|pg_advisory\w*|external_query|ml\.\w+)$",
    re.IGNORECASE,
)

_PATH_LIKE = re.compile(r"[/\\:]|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|gz|zst|db|duckdb|sqlite\d?|xlsx|arrow|avro)$", re.I)


@dataclass(frozen=True)
class AllowList:
    """A dialect's functions that may be called and schemas that may not be read (see guard_postgres.yaml)."""

    functions: frozenset[str]
    builtin_schema: str
    system_schema_prefix: str
    system_schemas: frozenset[str]

    @classmethod
    def load(cls, path: Path) -> "AllowList":
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        names = [name for group in data["functions"].values() for name in group] + data["syntax_calls"]
        return cls(frozenset(names), data["builtin_schema"], data["system_schema_prefix"], frozenset(data["system_schemas"]))

    def is_system_schema(self, schema: str) -> bool:
        return schema.startswith(self.system_schema_prefix) or schema in self.system_schemas


ALLOW_LISTS = {"postgres": AllowList.load(Path(__file__).with_name("guard_postgres.yaml"))}


def check_read_only(sql: str, dialect: str) -> exp.Expression:
    """Return the parsed statement if it is a safe read-only query; raise QueryRefused otherwise, also when the
    check itself fails (a parser bug on odd input): the guard fails closed. On PostgreSQL the statement to run is
    `plain_identifiers(sql)`, the text decided on."""
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
        sql = plain_identifiers(sql, dialect)
        statements = parse_statements(sql, dialect)
    except (ParseError, TokenError) as exc:
        raise QueryRefused(f"cannot parse the SQL as {dialect}: {first_line(exc)}") from exc
    if len(statements) != 1:
        raise QueryRefused(f"exactly one statement is allowed, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, (exp.Query, exp.Values)):
        raise QueryRefused(f"only read-only queries are allowed, not {_statement_kind(tree, sql, dialect)} statements")
    allowed = ALLOW_LISTS.get(dialect)
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise QueryRefused(f"only read-only queries are allowed: found {_node_kind(node)}")
        if isinstance(node, exp.Table):
            _check_table_source(node, allowed)
        elif isinstance(node, exp.Func):
            if allowed:
                _check_allowed_function(node, sql, allowed)
            else:
                _check_function(node)
    return tree


def _check_function(func: exp.Func) -> None:
    name = func.name if isinstance(func, exp.Anonymous) else func.sql_name()
    if _FORBIDDEN_FUNCTION.match(name or ""):
        raise QueryRefused(f"function {name}() is not allowed: it can reach files, settings or other databases")


def _check_allowed_function(func: exp.Func, sql: str, allowed: AllowList) -> None:
    name = _called_name(func, sql)
    if name is None:
        return
    schema = _qualifier(func)
    if schema is not None and schema != allowed.builtin_schema:
        raise QueryRefused(f"function {schema}.{name}() is not allowed: only the database's built-in functions may be called")
    if name not in allowed.functions:
        raise QueryRefused(
            f"function {name}() is not allowed: queries may call only built-in functions that compute values, "
            "not ones that read files, run SQL text or change the server"
        )


def _called_name(func: exp.Func, sql: str) -> str | None:
    """The function name the server resolves, or None for a node built from syntax (CAST, EXTRACT, CASE, an
    operator), which calls no function by name. sqlglot maps several names to one node (`now()` and `CURRENT_TIMESTAMP`),
    so a node made from a call is judged by the name written, which the parser's position records locate."""
    if isinstance(func, exp.Anonymous):
        return _identifier_name(func.this)
    start, end = func.meta.get("start"), func.meta.get("end")
    if start is None or end is None:
        return None
    written = sql[start:end + 1]
    return written[1:-1].replace('""', '"') if written.startswith('"') else _fold(written)


def _qualifier(func: exp.Func) -> str | None:
    """The schema a call is qualified with (`pg_catalog.lower(x)`), or None."""
    parent = func.parent
    if not isinstance(parent, exp.Dot) or parent.expression is not func:
        return None
    schema = parent.this
    while isinstance(schema, exp.Dot):
        schema = schema.expression
    return _identifier_name(schema)


def _identifier_name(node: exp.Expression | str) -> str:
    """A name as PostgreSQL reads it: unquoted folded to lower case, quoted exact; anything else in full."""
    if isinstance(node, str):
        return _fold(node)
    if isinstance(node, exp.Column) and not node.table:
        node = node.this
    if isinstance(node, exp.Identifier):
        return node.name if node.quoted else _fold(node.name)
    return node.sql(dialect="postgres")


def _fold(name: str) -> str:
    """PostgreSQL folds unquoted names to lower case, ASCII letters only (Python's lower() maps more: K, İ)."""
    return "".join(ch.lower() if "A" <= ch <= "Z" else ch for ch in name)


def _check_table_source(table: exp.Table, allowed: AllowList | None) -> None:
    source = table.this
    if allowed and isinstance(source, exp.Identifier):
        _check_relation(table, allowed)
    if isinstance(source, exp.Func) and not isinstance(source, _ALLOWED_TABLE_FUNCTIONS) and not allowed:
        name = source.name if isinstance(source, exp.Anonymous) else source.sql_name()
        raise QueryRefused(f"table function {name}() is not allowed: queries may read only the database's tables")
    if isinstance(source, exp.Literal) or (isinstance(source, exp.Identifier) and _PATH_LIKE.search(source.name)):
        raise QueryRefused(f"reading files is not allowed: {source.sql()}")


def _check_relation(table: exp.Table, allowed: AllowList) -> None:
    """Only the database's own schemas may be read: not a system schema, nor an unqualified system name (the system
    catalog comes first on the search path)."""
    schema = table.args.get("db")
    if schema:
        system = allowed.is_system_schema(_identifier_name(schema))
    else:
        system = _identifier_name(table.this).startswith(allowed.system_schema_prefix)
    if system:
        raise QueryRefused(f"reading the system catalogs is not allowed: {'.'.join(p.sql('postgres') for p in table.parts)}")


def plain_identifiers(sql: str, dialect: str) -> str:
    """PostgreSQL's unicode-escaped names (`U&"pg\\005fread\\005ffile"`, with `UESCAPE '!'`) spelled out as plain quoted
    names, so the guard decides on the name the server resolves (sqlglot reads `U&"x"` as `U & "x"`). The engine runs
    this text, the one decided on."""
    if dialect != "postgres" or "&" not in sql:
        return sql
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError:
        return sql  # the parser meets the same error, and the guard refuses the text for it
    spans = []
    for i, (u, amp, name) in enumerate(zip(tokens, tokens[1:], tokens[2:])):
        if not (u.token_type == TokenType.VAR and u.text in ("U", "u") and amp.token_type == TokenType.AMP
                and name.token_type == TokenType.IDENTIFIER and u.end + 1 == amp.start and amp.end + 1 == name.start):
            continue
        end, escape = name.end, "\\"
        if i + 4 < len(tokens) and tokens[i + 3].text.upper() == "UESCAPE" and tokens[i + 4].token_type == TokenType.STRING:
            end, escape = tokens[i + 4].end, tokens[i + 4].text
        decoded = _unicode_unescaped(sql[name.start + 1:name.end].replace('""', '"'), escape)
        spans.append((u.start, end, '"' + decoded.replace('"', '""') + '"'))
    for start, end, plain in reversed(spans):
        sql = sql[:start] + plain + sql[end + 1:]
    return sql


def _unicode_unescaped(text: str, escape: str) -> str:
    """PostgreSQL's rules: ESC ESC is ESC, ESC + 4 hex digits or ESC + '+' + 6 hex digits a code point (surrogate
    pairs joined); anything else is an error there, and a refusal here."""
    if len(escape) != 1 or escape in "0123456789abcdefABCDEF+'\" \t\r\n":
        raise QueryRefused(f"invalid UESCAPE character: {escape!r}")
    pattern = re.compile(rf"{re.escape(escape)}(?:({re.escape(escape)})|\+([0-9A-Fa-f]{{6}})|([0-9A-Fa-f]{{4}})|(.?))", re.S)

    def code_point(match: re.Match) -> str:
        same, long, short, bad = match.groups()
        if bad is not None:
            raise QueryRefused(f'invalid unicode escape in the name U&"{text}"')
        return same or chr(int(long or short, 16))

    try:
        return pattern.sub(code_point, text).encode("utf-16", "surrogatepass").decode("utf-16")
    except (ValueError, UnicodeError, OverflowError) as exc:
        raise QueryRefused(f'invalid unicode escape in the name U&"{text}"') from exc


def _statement_kind(tree: exp.Expression, sql: str, dialect: str) -> str:
    """The statement kind as written (SAVEPOINT, VACUUM, CREATE VIEW), which sqlglot may read as something else
    (SAVEPOINT as an alias); a statement opening with WITH or a parenthesis is named by what it does."""
    first = Dialect.get_or_raise(dialect).tokenize(sql)[0].text.upper()
    if first in ("WITH", "("):
        return _node_kind(tree)
    kind = tree.args.get("kind") if isinstance(tree, (exp.Create, exp.Drop, exp.Alter)) else None
    return f"{first} {kind.upper()}" if isinstance(kind, str) and kind else first


def _node_kind(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    return _KIND_NAMES.get(node.key, node.key.upper())
