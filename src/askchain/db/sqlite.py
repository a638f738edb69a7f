"""SQLite: read-only URI connections, an authorizer that admits only reads, a progress-handler timeout."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from askchain.db.base import Engine
from askchain.db.dialects import quoted
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.errors import DatabaseError, QueryFailed

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
if hasattr(sqlite3, "SQLITE_RECURSIVE"):
    _ALLOWED_ACTIONS.add(sqlite3.SQLITE_RECURSIVE)
_FORBIDDEN_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def _authorize(action, arg1, arg2, db_name, trigger):
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _FORBIDDEN_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


@dataclass
class SQLiteEngine(Engine):
    dialect: str = "sqlite"

    def __post_init__(self):
        super().__post_init__()
        self.path = Path(self.location).expanduser().resolve()
        with self._connect() as conn:  # fail early on an unreadable file
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.location} is not a readable SQLite database: {exc}") from exc

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(f"file:{self.path.as_posix()}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise DatabaseError(f"cannot open {self.location}: {exc}") from exc
        conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
        conn.execute("PRAGMA query_only = ON")
        return conn

    def _introspect(self) -> Schema:
        with self._connect() as conn:
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
        with self._connect() as conn:
            return conn.execute(f"SELECT * FROM {quoted(table, self.dialect)} LIMIT {int(limit)}").fetchall()

    def _run(self, sql, *, max_rows, timeout_s):
        conn = self._connect()
        deadline = time.monotonic() + timeout_s
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        conn.set_authorizer(_authorize)
        try:
            cursor = conn.execute(sql)
            rows = cursor.fetchmany(max_rows + 1)
            columns = [d[0] for d in cursor.description or []]
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise QueryFailed(f"query stopped at the {timeout_s:g} s time limit") from exc
            raise QueryFailed(str(exc)) from exc
        except sqlite3.Error as exc:
            raise QueryFailed(str(exc)) from exc
        finally:
            conn.close()
        return columns, rows[:max_rows], len(rows) > max_rows, None


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
