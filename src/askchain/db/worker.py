"""Queries on local database files run in worker processes, so a query that outruns its time or memory can be stopped.

A thread cannot be killed, and the engines' own limits do not cover all of a query's work: DuckDB builds strings
outside its memory limit and its interrupt checks, SQLite checks for an interrupt only between steps, and the rows a
query returns are built in Python. So each query runs in a child process, which interrupts it at the time limit;
the parent stops the child when it has not answered a grace period later, or when its resident memory passes the
memory limit. Workers answer one query at a time, are kept for the next, and are replaced when stopped.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from askchain.errors import AskchainError, QueryFailed, describe

if TYPE_CHECKING:  # the settings (pydantic) are not imported in a worker, which starts faster without them
    from askchain.config import DBSettings

#: columns, rows, whether more rows were left out
Rows = tuple[list[str], list[tuple], bool]

#: What the engine's own limit leaves of db.memory_limit_mb: a quarter, at least this much. Most heavy queries then end
#: with the engine's error before the worker is stopped; the rest is for what the engine does not count: the worker's
#: Python and libraries (~70 MB), the rows being built, strings DuckDB builds outside its limit (~100 MB past it when
#: it spills).
WORKER_HEADROOM_MB = 256
#: Databases a worker keeps open (least recently used closed first): their caches serve the next query.
OPEN_PER_WORKER = 8
#: How often the parent looks at a running query's worker: the memory a runaway can add between two looks.
WATCH_INTERVAL_S = 0.05
#: How long a worker may take to start (importing the engines) before its query fails.
START_TIMEOUT_S = 60
#: What a worker imports before it reports ready, so no query's time limit pays for it.
PRELOAD = ("askchain.db.files",)
_READY = "ready"
_MAIN = "import sys; from askchain.db.worker import serve; serve(int(sys.argv[1]), sys.argv[2])"


class LocalDatabase(Protocol):
    """A database file as a worker opens it: picklable, hashable, and the same for every query with the same limits."""

    path: str

    def open(self, scratch_dir: str) -> Any:
        """A read-only connection with the engine's limits; temporary files go under `scratch_dir`."""

    def run(self, conn: Any, sql: str, *, max_rows: int, timeout_s: float) -> Rows:
        """Run checked SQL on `conn`, interrupting it at `timeout_s`."""


def engine_memory_mb(limits: DBSettings) -> int:
    """The memory limit the engine itself enforces within a worker (DuckDB's memory_limit, SQLite's heap limit)."""
    headroom = max(limits.memory_limit_mb // 4, WORKER_HEADROOM_MB)
    return max(limits.memory_limit_mb - headroom, limits.memory_limit_mb // 4, 1)


# ---- the child ---------------------------------------------------------------------------------------------------
def serve(channel_fd: int, scratch_dir: str) -> None:
    """A worker's loop: answer queries until the parent closes the channel or ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it closes the channel
    _exit_when_orphaned(os.getppid(), scratch_dir)
    channel = Connection(channel_fd)
    opened: OrderedDict[LocalDatabase, Any] = OrderedDict()
    for module in PRELOAD:
        importlib.import_module(module)
    try:
        channel.send(_READY)
        while True:
            database, sql, max_rows, timeout_s = channel.recv()
            channel.send(_answer(opened, scratch_dir, database, sql, max_rows, timeout_s))
    except (EOFError, OSError):  # the parent closed the channel, or went away
        pass
    for conn in opened.values():
        conn.close()
    shutil.rmtree(scratch_dir, ignore_errors=True)  # the parent's to remove too, but it may have been killed


def _answer(opened: OrderedDict, scratch_dir: str, database: LocalDatabase, sql: str, max_rows: int,
            timeout_s: float) -> tuple[str, Any]:
    """("rows", Rows), ("refused", an AskchainError to raise in the parent) or ("failed", a bug described)."""
    try:
        conn = _connection(opened, scratch_dir, database)
        return "rows", database.run(conn, sql, max_rows=max_rows, timeout_s=timeout_s)
    except AskchainError as exc:
        return "refused", exc
    except Exception as exc:  # noqa: BLE001 - a bug, reported to the parent rather than ending the worker
        return "failed", describe(exc)


def _connection(opened: OrderedDict, scratch_dir: str, database: LocalDatabase) -> Any:
    """The open connection for `database`, opened on first use. Another configuration of the same file is closed
    first: DuckDB refuses two in one process."""
    if database in opened:
        opened.move_to_end(database)
        return opened[database]
    for other in [d for d in opened if d.path == database.path]:
        opened.pop(other).close()
    while len(opened) >= OPEN_PER_WORKER:
        opened.popitem(last=False)[1].close()
    opened[database] = database.open(scratch_dir)
    return opened[database]


def _exit_when_orphaned(parent: int, scratch_dir: str) -> None:
    """End the worker if its parent ends without closing the channel (killed), even in the middle of a query."""
    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        shutil.rmtree(scratch_dir, ignore_errors=True)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="askchain-orphan-watch").start()


# ---- the parent --------------------------------------------------------------------------------------------------
class _Worker:
    """One child process and the channel to it. Started without waiting; the first query waits for it to be ready."""

    def __init__(self):
        self.scratch_dir = tempfile.mkdtemp(prefix="askchain-query-")
        self.channel, theirs = Pipe()
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "TMPDIR": self.scratch_dir, "SQLITE_TMPDIR": self.scratch_dir,
               "PYTHONPATH": os.pathsep.join(filter(None, (package_root, os.environ.get("PYTHONPATH"))))}
        self.process = subprocess.Popen([sys.executable, "-c", _MAIN, str(theirs.fileno()), self.scratch_dir],
                                        pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        self.ready = False
        self.answering = False  # a query sent and its answer not read: the worker is not free for another

    @property
    def alive(self) -> bool:
        return not self.channel.closed and self.process.poll() is None

    def ask(self, database: LocalDatabase, sql: str, *, max_rows: int, timeout_s: float, limits: DBSettings) -> Rows:
        if not self.ready:
            self._wait(START_TIMEOUT_S, "the query worker did not start")
            self.ready = True
        self.answering = True
        try:
            self.channel.send((database, sql, max_rows, timeout_s))
        except OSError as exc:  # it ended since its last query
            raise self._ended() from exc
        late = f"query stopped at the {timeout_s:g} s time limit"
        kind, payload = self._wait(timeout_s + limits.interrupt_grace_s, late, memory_limit_mb=limits.memory_limit_mb)
        self.answering = False
        if kind == "refused":
            raise payload
        if kind == "failed":
            raise RuntimeError(f"the query worker failed: {payload}")
        return payload

    def _wait(self, within_s: float, late: str, memory_limit_mb: int | None = None) -> Any:
        """The worker's next message; it is stopped, and the query fails, when it is late or over its memory."""
        deadline = time.monotonic() + within_s
        while not self.channel.poll(WATCH_INTERVAL_S):
            if memory_limit_mb and _resident_mb(self.process.pid) > memory_limit_mb:
                self.stop()
                raise QueryFailed(f"query stopped at the {memory_limit_mb} MB memory limit")
            if time.monotonic() > deadline:
                self.stop()
                raise QueryFailed(late)
        try:
            return self.channel.recv()
        except (EOFError, OSError) as exc:  # it ended: the kernel's OOM killer, a crash
            raise self._ended() from exc

    def _ended(self) -> QueryFailed:
        return QueryFailed(f"the query's worker process ended unexpectedly (exit code {self.stop()})")

    def stop(self) -> int | None:
        """Kill the worker now; returns its exit code."""
        self.process.kill()
        return self.close()

    def close(self) -> int | None:
        """Close the channel (an idle worker then exits by itself), reap the process and remove its files."""
        self.channel.close()
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        shutil.rmtree(self.scratch_dir, ignore_errors=True)
        return code


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _resident_mb(pid: int) -> float:
    """A process's resident memory; 0 where /proc is missing (not Linux), leaving the engines' own limits."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


class WorkerPool:
    """The process's query workers: at most `db.query_workers` queries run at once, each in a worker of its own."""

    def __init__(self):
        self._idle: list[_Worker] = []
        self._busy = 0
        self._changed = threading.Condition()

    def run(self, database: LocalDatabase, sql: str, *, max_rows: int, timeout_s: float, limits: DBSettings) -> Rows:
        worker = self._take(limits.query_workers)
        try:
            return worker.ask(database, sql, max_rows=max_rows, timeout_s=timeout_s, limits=limits)
        finally:
            self._give_back(worker)

    def prestart(self) -> None:
        """Start a worker ahead of the first query, so its start overlaps the caller's own work."""
        with self._changed:
            if not self._idle and not self._busy:
                self._idle.append(_Worker())

    def shutdown(self) -> None:
        """Close the idle workers (at exit; a busy one ends with its parent, see _exit_when_orphaned)."""
        with self._changed:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _take(self, most_at_once: int) -> _Worker:
        with self._changed:
            self._changed.wait_for(lambda: self._busy < most_at_once)
            self._busy += 1
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.close()  # ended while idle (the kernel's OOM killer)
        return _Worker()

    def _give_back(self, worker: _Worker) -> None:
        if worker.answering:  # left mid-query (Ctrl-C, a reply that could not be read): its next answer is not ours
            worker.stop()
        alive = worker.alive
        if not alive:
            worker.close()
        with self._changed:
            self._busy -= 1
            if alive:
                self._idle.append(worker)
            self._changed.notify()


WORKERS = WorkerPool()
atexit.register(WORKERS.shutdown)
