"""SQLite: read-only URI connections for introspection; queries run in a worker process with an authorizer that
admits only reads, a progress-handler timeout, a heap limit and a cap on any one value (askchain.db.files)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from askchain.db.base import Engine
from askchain.db.dialects import quoted
from askchain.db.files import SQLiteFile, connect_sqlite, file_stamp
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.db.worker import WORKERS, engine_memory_mb
from askchain.errors import DatabaseError


@dataclass
class SQLiteEngine(Engine):
    dialect: str = "sqlite"

    def __post_init__(self):
        super().__post_init__()
        self.path = Path(self.location).expanduser().resolve()
        with connect_sqlite(self.path) as conn:  # fail early on an unreadable file
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.location} is not a readable SQLite database: {exc}") from exc
        #: The file as the query workers open it (askchain.db.worker)
        self._file = SQLiteFile(str(self.path), file_stamp(self.path), engine_memory_mb(self.limits),
                                self.limits.max_value_mb)
        WORKERS.prestart()

    def _introspect(self) -> Schema:
        with connect_sqlite(self.path) as conn:
            names = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
            )]
            tables = []
            for name in names:
                q = quoted(name, self.dialect)
                info = conn.execute(f"PRAGMA table_info({q})").fetchall()
                columns = [Column(r[1], r[2] or "", primary_key=r[5] > 0) for r in info]
                fks: dict[int, ForeignKey] = {}
                for r in conn.execute(f"PRAGMA foreign_key_list({q})"):
                    fk = fks.setdefault(r[0], ForeignKey([], r[2], []))
                    fk.columns.append(r[3])
                    fk.ref_columns.append(r[4] or r[3])
                for col in columns:
                    c = quoted(col.name, self.dialect)
                    col.examples = [v[0] for v in conn.execute(
                        f"SELECT DISTINCT {c} FROM {q} WHERE {c} IS NOT NULL LIMIT 3"
                    )]
                count = conn.execute(f"SELECT count(*) FROM {q}").fetchone()[0]
                tables.append(Table(name, columns, list(fks.values()), count))
        _resolve_fk_targets(tables)
        return Schema(tables, self.query_dialect, self.path.stem)

    def example_rows(self, table: str, limit: int = 3) -> list[tuple]:
        with connect_sqlite(self.path) as conn:
            return conn.execute(f"SELECT * FROM {quoted(table, self.dialect)} LIMIT {int(limit)}").fetchall()

    def _run(self, sql, *, max_rows, timeout_s):
        return *WORKERS.run(self._file, sql, max_rows=max_rows, timeout_s=timeout_s, limits=self.limits), None


def _resolve_fk_targets(tables: list[Table]) -> None:
    """SQLite allows foreign keys to name tables in any case, or to omit the column; normalise both."""
    by_lower = {t.name.lower(): t for t in tables}
    for table in tables:
        for fk in table.foreign_keys:
            target = by_lower.get(fk.ref_table.lower())
            if target:
                fk.ref_table = target.name
                fk.ref_columns = [
                    (target.column(c).name if target.column(c) else (target.primary_key or [c])[0]) for c in fk.ref_columns
                ]
