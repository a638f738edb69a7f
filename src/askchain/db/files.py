"""Local database files as askchain opens them: read-only, reads only, locked down, and, in a query worker
(askchain.db.worker), under the memory, thread and value caps. Apart from the engines, which need sqlglot and the
settings, so that a worker starts in half the time."""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from askchain.db.worker import Rows
from askchain.errors import DatabaseError, QueryFailed

def file_stamp(path: Path) -> tuple[int, int]:
    """A file's inode and modification time: a file replaced since (the Ethereum dataset's daily rebuild) is another
    database to a worker, which would otherwise keep reading the old one through the connection it keeps open."""
    info = path.stat()
    return info.st_ino, info.st_mtime_ns


# ---- SQLite ------------------------------------------------------------------------------------------------------
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


def connect_sqlite(path: Path) -> sqlite3.Connection:
    """A read-only connection (URI mode=ro and query_only), text read leniently."""
    try:
        conn = sqlite3.connect(f"file:{path.as_posix()}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open {path}: {exc}") from exc
    conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
    conn.execute("PRAGMA query_only = ON")
    return conn


@dataclass(frozen=True)
class SQLiteFile:
    """A SQLite file as a query worker opens it: an authorizer that admits only reads, a heap limit, a value cap."""

    path: str
    stamp: tuple[int, int]  # file_stamp when the engine opened the file
    heap_limit_mb: int
    max_value_mb: int

    def open(self, scratch_dir: str) -> sqlite3.Connection:
        conn = connect_sqlite(Path(self.path))
        # Process-wide (all of the worker's SQLite): SQLite fails an allocation past it with "out of memory".
        conn.execute(f"PRAGMA hard_heap_limit = {self.heap_limit_mb * 2**20}")
        if hasattr(conn, "setlimit"):  # Python 3.11+: one string or blob, so no single step builds a huge value
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_value_mb * 2**20)
        conn.set_authorizer(_authorize)
        return conn

    def run(self, conn: sqlite3.Connection, sql: str, *, max_rows: int, timeout_s: float) -> Rows:
        deadline = time.monotonic() + timeout_s
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            rows = cursor.fetchmany(max_rows + 1)
            columns = [d[0] for d in cursor.description or []]
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise QueryFailed(f"query stopped at the {timeout_s:g} s time limit") from exc
            raise QueryFailed(str(exc)) from exc
        except sqlite3.Error as exc:
            raise QueryFailed(str(exc)) from exc
        except MemoryError as exc:  # SQLite's heap limit (sqlite3 raises MemoryError for SQLITE_NOMEM)
            raise QueryFailed(f"query stopped at the {self.heap_limit_mb} MB SQLite memory limit") from exc
        finally:
            cursor.close()
        return columns, rows[:max_rows], len(rows) > max_rows


# ---- DuckDB ------------------------------------------------------------------------------------------------------
# Applied at connect time with the caps; `lock_configuration`, set last, then makes them impossible to change from a
# query.
_LOCKED_DOWN = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}


def connect_duckdb(path: Path | str, *, memory_limit_mb: int, threads: int, temp_directory: str = "",
                   spill_limit_mb: int = 0) -> duckdb.DuckDBPyConnection:
    """A read-only, locked-down connection; no temporary files unless a directory and a size for them are given."""
    config = {**_LOCKED_DOWN, "memory_limit": f"{memory_limit_mb}MiB", "threads": threads,
              "temp_directory": temp_directory, "max_temp_directory_size": f"{spill_limit_mb}MiB",
              "lock_configuration": True}
    return duckdb.connect(str(path), read_only=True, config=config)


@dataclass(frozen=True)
class DuckDBFile:
    """A DuckDB file as a query worker opens it: locked down, under its memory, thread and spill caps."""

    path: str
    stamp: tuple[int, int]  # file_stamp when the engine opened the file
    memory_limit_mb: int
    threads: int
    spill_limit_mb: int

    def open(self, scratch_dir: str) -> duckdb.DuckDBPyConnection:
        # Spilled data goes to the worker's own directory (removed with the worker), not beside the database file.
        spill = tempfile.mkdtemp(prefix="duckdb-", dir=scratch_dir) if self.spill_limit_mb else ""
        try:
            return connect_duckdb(self.path, memory_limit_mb=self.memory_limit_mb, threads=self.threads,
                                  temp_directory=spill, spill_limit_mb=self.spill_limit_mb)
        except duckdb.Error as exc:
            raise DatabaseError(f"cannot open {self.path} as a DuckDB database: {str(exc).splitlines()[0]}") from exc

    def run(self, conn: duckdb.DuckDBPyConnection, sql: str, *, max_rows: int, timeout_s: float) -> Rows:
        cur = conn.cursor()
        timer = threading.Timer(timeout_s, cur.interrupt)
        timer.start()
        try:
            cur.execute(sql)
            rows = cur.fetchmany(max_rows + 1)
            columns = [d[0] for d in cur.description or []]
        except duckdb.InterruptException as exc:
            raise QueryFailed(f"query stopped at the {timeout_s:g} s time limit") from exc
        except duckdb.Error as exc:
            raise QueryFailed(str(exc).splitlines()[0]) from exc
        finally:
            timer.cancel()
            cur.close()
        return columns, rows[:max_rows], len(rows) > max_rows
