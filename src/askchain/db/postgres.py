"""PostgreSQL: read-only by construction, connected as a role that may only read.

URL: any libpq URI, `postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?sslmode=…]`, plus `schema=` (askchain's own,
default `public`): the schema described to the model and put first on the search path.

Barriers after the guard: the role is checked on connect, and one that may write, read server files, run programs
or change the server (a superuser among them) is refused unless `db.allow_unsafe_postgres_role` says otherwise, since
for such a role PostgreSQL itself stops little inside a read-only transaction (`COPY ... TO PROGRAM` runs). Sessions
open with `default_transaction_read_only=on` and `standard_conforming_strings=on` (a backslash in a string is text,
as the guard reads it); every statement runs in a READ ONLY transaction that is always rolled back, with
`statement_timeout` from the limits and `work_mem` a share of `db.memory_limit_mb`;
rows are streamed and the stream is cancelled past the row cap or once their values pass `db.memory_limit_mb`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from askchain.db.base import Engine, QueryResult, take_rows
from askchain.db.dialects import quoted
from askchain.db.guard import plain_identifiers
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.errors import DatabaseError, QueryFailed, QueryRefused, require

#: Above this planner estimate the row count is reported as estimated instead of counted.
EXACT_COUNT_BELOW = 1_000_000
_NO_EXAMPLES = ("bytea", "json", "xml", "tsvector", "geometry", "geography", "[]")
#: A query's sorts and hashes each take up to work_mem (hashes twice that), in each parallel worker: a 32nd of the
#: memory cap lets several of them run together within it.
_WORK_MEM_SHARE = 32
#: Predefined roles that read or write server files, run programs, write every table, signal other sessions or read
#: their SQL and the server's settings.
_SERVER_ROLES = [
    "pg_read_server_files", "pg_write_server_files", "pg_execute_server_program", "pg_write_all_data",
    "pg_signal_backend", "pg_checkpoint", "pg_create_subscription", "pg_read_all_settings", "pg_read_all_stats",
    "pg_monitor",
]
# Why the connected role is more than a reader, one row per reason, over the roles it may act as (itself and every
# role it is a member of, which SET ROLE reaches). Functions PostgreSQL keeps from ordinary roles (pg_read_file,
# lo_import...) are those of pg_catalog that PUBLIC may not execute.
_ROLE_RISKS = """
WITH held AS (SELECT * FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER')),
user_schemas AS (SELECT oid, nspname FROM pg_namespace WHERE nspname !~ '^pg_' AND nspname <> 'information_schema'),
user_relations AS (
    SELECT c.oid, c.relkind, quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
    FROM pg_class c JOIN user_schemas n ON n.oid = c.relnamespace
)
SELECT reason FROM (
    SELECT DISTINCT 1, 'is a superuser' FROM held WHERE rolsuper
    UNION ALL SELECT DISTINCT 2, 'may create roles' FROM held WHERE rolcreaterole
    UNION ALL SELECT DISTINCT 3, 'may create databases' FROM held WHERE rolcreatedb
    UNION ALL SELECT DISTINCT 4, 'may start replication' FROM held WHERE rolreplication
    UNION ALL SELECT DISTINCT 5, 'bypasses row-level security' FROM held WHERE rolbypassrls
    UNION ALL SELECT 6, 'is a member of ' || rolname FROM held WHERE rolname = ANY(%(server_roles)s)
    UNION ALL (SELECT 7, 'may write ' || r.name FROM user_relations r, held h
               WHERE (r.relkind IN ('r', 'p', 'v', 'm', 'f')
                      AND (has_table_privilege(h.oid, r.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
                           OR has_any_column_privilege(h.oid, r.oid, 'INSERT, UPDATE')))
                  OR (r.relkind = 'S' AND has_sequence_privilege(h.oid, r.oid, 'USAGE, UPDATE'))
               ORDER BY r.name LIMIT 1)
    UNION ALL (SELECT 8, 'may create objects in schema ' || quote_ident(n.nspname) FROM user_schemas n, held h
               WHERE has_schema_privilege(h.oid, n.oid, 'CREATE') ORDER BY n.nspname LIMIT 1)
    UNION ALL (SELECT 9, 'may create schemas in database ' || quote_ident(current_database()) FROM held h
               WHERE has_database_privilege(h.oid, current_database(), 'CREATE') LIMIT 1)
    UNION ALL (SELECT 10, 'may call ' || p.proname || '()' FROM pg_proc p, held h
               WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proacl IS NOT NULL
                 AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
                 AND has_function_privilege(h.oid, p.oid, 'EXECUTE')
               ORDER BY p.proname LIMIT 1)
) risks(rank, reason)
ORDER BY rank, reason
"""
#: How many of a refused role's reasons the refusal names.
_REASONS_SHOWN = 4

_TABLES = """
SELECT c.relname, c.relkind, c.reltuples::bigint, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
ORDER BY c.relname
"""
_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), col_description(a.attrelid, a.attnum)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
# One row per key column, in key order; `ref_*` are null for primary keys.
_KEYS = """
SELECT con.conname, con.contype, c.relname, a.attname, rc.relname, ra.attname
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, coalesce(con.confkey, con.conkey)) WITH ORDINALITY AS k(col, ref_col, pos)
JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
LEFT JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.ref_col
WHERE n.nspname = %(schema)s AND con.contype IN ('p', 'f')
ORDER BY c.relname, con.conname, k.pos
"""


@dataclass
class PostgresEngine(Engine):
    dialect: str = "postgres"
    #: The schema to describe and to search first; the URL's `schema=` sets it too.
    schema_name: str = ""
    #: Example values per column read during introspection (0: none).
    examples: int = 3

    def __post_init__(self):
        super().__post_init__()
        self._pg = require("psycopg", "postgres")
        try:
            conninfo, url_schema = _split_schema(self.location)
            params = self._pg.conninfo.conninfo_to_dict(conninfo)
        except (ValueError, self._pg.Error) as exc:  # ValueError: what urlsplit cannot read, e.g. "[::1" unclosed
            raise DatabaseError(f"bad PostgreSQL URL {_redacted(self.location)}: {_first_line(exc)}") from exc
        self.schema_name = self.schema_name or url_schema or "public"
        read_only = (
            "-c default_transaction_read_only=on -c standard_conforming_strings=on"
            f" -c search_path={_escape_option(self.schema_name)}"
        )
        params["options"] = f"{params.get('options', '')} {read_only}".strip()
        params.setdefault("connect_timeout", str(max(1, min(10, int(self.limits.timeout_s)))))
        params.setdefault("application_name", "askchain")
        self._params = params
        self._check_role()

    def _check_role(self) -> None:
        """Refuse a role that may do more than read, unless the settings accept the risk; connecting fails early here
        on a wrong host, database or password."""
        with self._transaction() as conn:
            role = conn.execute("SELECT current_user").fetchone()[0]
            risks = [reason for (reason,) in conn.execute(_ROLE_RISKS, {"server_roles": _SERVER_ROLES})]
        if not risks or self.limits.allow_unsafe_postgres_role:
            return
        more = len(risks) - _REASONS_SHOWN
        shown = ", ".join(risks[:_REASONS_SHOWN]) + (f" (and {more} more)" if more > 0 else "")
        raise DatabaseError(
            f'PostgreSQL role "{role}" {shown}: askchain runs model-written SQL and connects only as a role that may '
            f"read and nothing more. Create one: {select_only_role(self._params.get('dbname', ''), self.schema_name)} "
            "(README, Security); or, accepting the risk, set db.allow_unsafe_postgres_role: true"
        )

    def execute(self, sql: str, **limits) -> QueryResult:
        """Run the text the guard decides on: unicode-escaped names (`U&"..."`) spelled out, as the guard reads them."""
        return super().execute(plain_identifiers(sql, self.query_dialect), **limits)

    def _transaction(self, timeout_s: float | None = None):
        """A fresh connection in a READ ONLY transaction, rolled back and closed on exit."""
        return _ReadOnlyTransaction(self, timeout_s or self.limits.timeout_s)

    # ---- introspection -------------------------------------------------------------------------
    def _introspect(self) -> Schema:
        args = {"schema": self.schema_name}
        with self._transaction() as conn:
            relations = conn.execute(_TABLES, args).fetchall()
            columns: dict[str, list[Column]] = {}
            for table, name, data_type, comment in conn.execute(_COLUMNS, args):
                columns.setdefault(table, []).append(Column(name, data_type, comment))
            primary: dict[str, set[str]] = {}
            foreign: dict[tuple[str, str], ForeignKey] = {}
            for con, kind, table, col, ref_table, ref_col in conn.execute(_KEYS, args):
                if kind == "p":
                    primary.setdefault(table, set()).add(col)
                else:
                    fk = foreign.setdefault((table, con), ForeignKey([], ref_table, []))
                    fk.columns.append(col)
                    fk.ref_columns.append(ref_col)
            tables = []
            for name, kind, estimate, comment in relations:
                cols = columns.get(name, [])
                for col in cols:
                    col.primary_key = col.name in primary.get(name, set())
                    if self.examples:
                        col.examples = self._examples(conn, name, col)
                fks = [fk for (table, _), fk in foreign.items() if table == name]
                tables.append(Table(name, cols, fks, self._row_count(conn, name, kind, estimate), comment))
        return Schema(tables, self.query_dialect, self._params.get("dbname", ""))

    def _row_count(self, conn, table: str, kind: str, estimate: int) -> int | None:
        """Exact for small tables, the planner's estimate for large ones, none for views."""
        if kind in ("v", "f"):
            return None
        if estimate >= EXACT_COUNT_BELOW:
            return estimate
        sql = self._pg.sql
        return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()[0]

    def _examples(self, conn, table: str, column: Column) -> list:
        if any(marker in column.type for marker in _NO_EXAMPLES):
            return []
        sql = self._pg.sql
        query = sql.SQL(
            "SELECT DISTINCT {c} FROM (SELECT {c} FROM {t} LIMIT 1000) s WHERE {c} IS NOT NULL LIMIT {n}"
        ).format(c=sql.Identifier(column.name), t=sql.Identifier(table), n=sql.Literal(self.examples))
        try:
            with conn.transaction():  # a savepoint: a failure here must not end the read-only transaction
                values = [r[0] for r in conn.execute(query)]
        except self._pg.errors.UndefinedFunction:  # types without equality (e.g. point) cannot be DISTINCT
            return []
        return [v if isinstance(v, (int, float, str)) else str(v) for v in values]

    def example_rows(self, table: str, limit: int = 3) -> list[tuple]:
        sql = self._pg.sql
        with self._transaction() as conn:
            query = sql.SQL("SELECT * FROM {} LIMIT {}").format(sql.Identifier(table), sql.Literal(int(limit)))
            return conn.execute(query).fetchall()

    # ---- execution -----------------------------------------------------------------------------
    def _run(self, sql, *, max_rows, timeout_s):
        """Rows streamed into askchain's own process, so they count against the memory limit as they arrive."""
        with self._transaction(timeout_s) as conn:
            try:
                cursor = conn.cursor()
                # Closed on every way out (the row cap, the memory limit), which cancels the rest of the result and
                # releases the connection before the transaction rolls back.
                with contextlib.closing(cursor.stream(sql)) as stream:
                    rows = take_rows(stream, max_rows, self.limits.memory_limit_mb)
                columns = [d.name for d in cursor.description or []]
            except self._pg.errors.QueryCanceled as exc:
                raise QueryFailed(f"query stopped at the {timeout_s:g} s time limit") from exc
            except self._pg.errors.ReadOnlySqlTransaction as exc:
                raise QueryRefused(f"only read-only queries are allowed: PostgreSQL refused it ({_first_line(exc)})") from exc
            except self._pg.Error as exc:
                raise QueryFailed(_first_line(exc)) from exc
        return columns, rows[:max_rows], len(rows) > max_rows, None


class _ReadOnlyTransaction:
    """Context manager: connect, BEGIN READ ONLY with a statement timeout; on exit roll back and close."""

    def __init__(self, engine: PostgresEngine, timeout_s: float):
        self.engine = engine
        self.timeout_ms = max(1, int(timeout_s * 1000))
        self.conn = None

    def __enter__(self):
        pg = self.engine._pg
        try:
            self.conn = pg.connect(**self.engine._params)
        except pg.Error as exc:
            raise DatabaseError(f"cannot connect to PostgreSQL {_redacted(self.engine.location)}: {_first_line(exc)}") from exc
        self.conn.read_only = True
        self.conn.execute(f"SET LOCAL statement_timeout = {self.timeout_ms}")
        self.conn.execute(f"SET LOCAL work_mem = '{max(1, self.engine.limits.memory_limit_mb // _WORK_MEM_SHARE)}MB'")
        return self.conn

    def __exit__(self, *exc_info):
        try:
            if not self.conn.broken:  # a connection lost mid-query has nothing to roll back (and would raise)
                self.conn.rollback()
        finally:
            self.conn.close()


def select_only_role(database: str, schema: str, role: str = "askchain_reader") -> str:
    """The SQL that creates a role which may read the schema's tables and nothing more (run it as a superuser)."""
    db, ns, name = quoted(database or "DBNAME", "postgres"), quoted(schema, "postgres"), quoted(role, "postgres")
    return (
        f"CREATE ROLE {name} LOGIN PASSWORD '...'; GRANT CONNECT ON DATABASE {db} TO {name}; "
        f"GRANT USAGE ON SCHEMA {ns} TO {name}; GRANT SELECT ON ALL TABLES IN SCHEMA {ns} TO {name}; "
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {ns} GRANT SELECT ON TABLES TO {name};"
    )


def _split_schema(location: str) -> tuple[str, str]:
    """Take askchain's `schema=` out of the URL, since libpq rejects parameters it does not know."""
    parts = urlsplit(location)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    return urlunsplit(parts._replace(query=rest)), schema


def _escape_option(value: str) -> str:
    """Escape a value for libpq's `options` (backslash and whitespace are special there)."""
    return "".join("\\" + ch if ch == "\\" or ch.isspace() else ch for ch in value)


def _redacted(location: str) -> str:
    """The URL without its password; one too malformed to find the password in is not repeated at all."""
    try:
        parts = urlsplit(location)
    except ValueError:
        return "(unreadable)"
    if parts.password is None:
        return location
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]
