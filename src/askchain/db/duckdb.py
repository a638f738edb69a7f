"""DuckDB: a read-only, locked-down connection for introspection; queries run in a worker process under memory,
thread and spill caps, with external access, extension loading and configuration changes locked (askchain.db.files)."""

from __future__ import annotations

import threading
from decimal import Decimal
from dataclasses import dataclass
from pathlib import Path

import duckdb
from sqlglot import exp

from askchain.config import get_settings
from askchain.db.base import Engine
from askchain.db.dialects import column_type, quoted
from askchain.db.files import DuckDBFile, connect_duckdb, file_stamp
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.db.worker import WORKERS, engine_memory_mb
from askchain.errors import DatabaseError


def connect_read_only(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only, locked-down connection in this process (introspection; queries run in a worker). DuckDB refuses a
    second connection to a file with another configuration, so everything in a process that opens one file opens it
    this way: with the settings' caps and no temporary files."""
    limits = get_settings().db
    return connect_duckdb(path, memory_limit_mb=engine_memory_mb(limits), threads=limits.threads)


def table_names(path: Path) -> set[str]:
    """The tables of a DuckDB file, read through a short-lived locked-down connection."""
    try:
        with connect_read_only(path) as conn:
            return {r[0] for r in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    except duckdb.Error as exc:
        raise DatabaseError(f"cannot open {path} as a DuckDB database: {str(exc).splitlines()[0]}") from exc


@dataclass
class DuckDBEngine(Engine):
    dialect: str = "duckdb"

    def __post_init__(self):
        super().__post_init__()
        self.path = Path(self.location).expanduser().resolve()
        try:
            self._conn = connect_read_only(self.path)
        except duckdb.Error as exc:
            raise DatabaseError(f"cannot open {self.location} as a DuckDB database: {str(exc).splitlines()[0]}") from exc
        self._lock = threading.Lock()
        limits = self.limits
        #: The file as the query workers open it (askchain.db.worker)
        self._file = DuckDBFile(str(self.path), file_stamp(self.path), engine_memory_mb(limits), limits.threads,
                                limits.spill_limit_mb)
        WORKERS.prestart()

    def _cursor(self):
        with self._lock:
            return self._conn.cursor()

    def _introspect(self) -> Schema:
        cur = self._cursor()
        tables = []
        for (name, comment) in cur.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = current_schema() ORDER BY table_name"
        ).fetchall():
            cols = cur.execute(
                "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE database_name = current_database() "
                "AND schema_name = current_schema() AND table_name = ? ORDER BY column_index", [name]
            ).fetchall()
            pk, fks = set(), []
            for ctype, ccols, ref_table, ref_cols in cur.execute(
                "SELECT constraint_type, constraint_column_names, referenced_table, referenced_column_names "
                "FROM duckdb_constraints() WHERE database_name = current_database() AND table_name = ?", [name]
            ).fetchall():
                if ctype == "PRIMARY KEY":
                    pk.update(ccols)
                elif ctype == "FOREIGN KEY":
                    fks.append(ForeignKey(list(ccols), ref_table, list(ref_cols)))
            q = quoted(name, self.dialect)
            count = cur.execute(f"SELECT count(*) FROM {q}").fetchone()[0]
            columns = [Column(c, t, d or None, self._examples(cur, name, c, t), c in pk) for c, t, d in cols]
            tables.append(Table(name, columns, fks, count, comment or None))
        return Schema(tables, self.query_dialect, self.path.stem)

    def _examples(self, cur, table: str, column: str, data_type: str) -> list:
        """A few values of a scalar column; nested and binary values say little in a prompt."""
        if column_type(data_type, self.dialect).is_type(*exp.DataType.NESTED_TYPES, *exp.DataType.BINARY_TYPES):
            return []
        c = quoted(column, self.dialect)
        rows = cur.execute(
            f"SELECT DISTINCT {c} FROM (SELECT {c} FROM {quoted(table, self.dialect)} LIMIT 1000) WHERE {c} IS NOT NULL LIMIT 3"
        ).fetchall()
        return [r[0] if isinstance(r[0], (int, float, str, Decimal)) or r[0] is None else str(r[0]) for r in rows]

    def example_rows(self, table: str, limit: int = 3) -> list[tuple]:
        return self._cursor().execute(f"SELECT * FROM {quoted(table, self.dialect)} LIMIT {int(limit)}").fetchall()

    def _run(self, sql, *, max_rows, timeout_s):
        return *WORKERS.run(self._file, sql, max_rows=max_rows, timeout_s=timeout_s, limits=self.limits), None

    def close(self) -> None:
        self._conn.close()
