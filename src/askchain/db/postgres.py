"""PostgreSQL: read-only by construction, whatever the role may do.

URL: any libpq URI, `postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?sslmode=…]`, plus `schema=` (askchain's own,
default `public`): the schema described to the model and put first on the search path.

Barriers after the guard: sessions open with `default_transaction_read_only=on`, every statement runs in a
READ ONLY transaction that is always rolled back, with `statement_timeout` from the limits; rows are streamed
and the stream is cancelled past the row cap. For defence in depth also connect as a role with SELECT only.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from askchain.db.base import Engine
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.errors import DatabaseError, QueryFailed, QueryRefused, require

#: Above this planner estimate the row count is reported as estimated instead of counted.
EXACT_COUNT_BELOW = 1_000_000
_NO_EXAMPLES = ("bytea", "json", "xml", "tsvector", "geometry", "geography", "[]")

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
        conninfo, url_schema = _split_schema(self.location)
        self.schema_name = self.schema_name or url_schema or "public"
        try:
            params = self._pg.conninfo.conninfo_to_dict(conninfo)
        except self._pg.Error as exc:
            raise DatabaseError(f"bad PostgreSQL URL {_redacted(self.location)}: {_first_line(exc)}") from exc
        read_only = f"-c default_transaction_read_only=on -c search_path={_escape_option(self.schema_name)}"
        params["options"] = f"{params.get('options', '')} {read_only}".strip()
        params.setdefault("connect_timeout", str(max(1, min(10, int(self.limits.timeout_s)))))
        params.setdefault("application_name", "askchain")
        self._params = params
        with self._transaction() as conn:  # fail early on a wrong host, database or password
            conn.execute("SELECT 1")

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
        rows: list[tuple] = []
        with self._transaction(timeout_s) as conn:
            try:
                cursor = conn.cursor()
                for row in cursor.stream(sql):  # leaving the stream early cancels the rest of the result
                    rows.append(row)
                    if len(rows) > max_rows:
                        break
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
        return self.conn

    def __exit__(self, *exc_info):
        try:
            self.conn.rollback()
        finally:
            self.conn.close()


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
    parts = urlsplit(location)
    if parts.password is None:
        return location
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]
