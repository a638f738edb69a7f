"""The query workers: reused between queries, replaced when they end, no more at once than `db.query_workers`, and
a replaced database file read anew."""

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from askchain.config import get_settings
from askchain.db import open_database
from askchain.db.worker import WORKERS, _Worker


@pytest.fixture(autouse=True)
def no_workers_before_or_after():
    WORKERS.shutdown()
    yield
    WORKERS.shutdown()


def write_duckdb(path, value):
    tmp = path.with_name(path.name + ".new")
    with duckdb.connect(str(tmp)) as con:
        con.execute(f"CREATE TABLE facts AS SELECT {value} AS value")
    os.replace(tmp, path)


def test_a_replaced_file_is_read_anew(tmp_path):
    """The Ethereum dataset is rebuilt in place each day: an engine opened after that reads the new file, though a
    worker keeps the old one open."""
    path = tmp_path / "daily.duckdb"
    write_duckdb(path, 1)
    assert open_database(str(path)).execute("SELECT value FROM facts").rows == [(1,)]
    write_duckdb(path, 2)
    assert open_database(str(path)).execute("SELECT value FROM facts").rows == [(2,)]


def test_a_worker_that_ended_while_idle_is_replaced(concert_db_copy):
    engine = open_database(str(concert_db_copy))
    assert engine.execute("SELECT count(*) FROM singer").rows == [(6,)]
    (worker,) = WORKERS._idle
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.wait()
    assert engine.execute("SELECT count(*) FROM singer").rows == [(6,)]
    assert not os.path.exists(worker.scratch_dir), "the ended worker's files are removed"


def test_no_more_queries_run_at_once_than_the_setting(concert_db_copy, monkeypatch):
    limits = get_settings().with_overrides(db=dict(query_workers=2)).db
    engine = open_database(str(concert_db_copy), limits)
    running, most = 0, 0
    lock = threading.Lock()
    ask = _Worker.ask

    def counted_ask(worker, *args, **kwargs):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            return ask(worker, *args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(_Worker, "ask", counted_ask)
    sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200000) SELECT count(*) FROM n"
    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(lambda _: engine.execute(sql).rows, range(10)))
    assert results == [[(200000,)]] * 10
    assert most == 2 and len(WORKERS._idle) <= 2


def test_a_worker_left_mid_query_is_not_given_another(concert_db_copy, monkeypatch):
    """Ctrl-C while a query runs: the worker's answer to it would be read as the next query's, so it is stopped."""
    engine = open_database(str(concert_db_copy))
    assert engine.execute("SELECT 1").rows == [(1,)]
    (worker,) = WORKERS._idle

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_Worker, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        engine.execute("SELECT 2")
    monkeypatch.undo()
    assert not worker.alive and not WORKERS._idle
    assert engine.execute("SELECT 3").rows == [(3,)]


def test_a_worker_ends_with_its_killed_parent_and_removes_its_files(concert_db):
    parent = subprocess.run([sys.executable, "-c", KILLED_PARENT, str(concert_db)], capture_output=True, text=True,
                            timeout=120)
    pid, scratch_dir = parent.stdout.split()
    deadline = time.monotonic() + 10
    while (running(int(pid)) or os.path.exists(scratch_dir)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(int(pid)) and not os.path.exists(scratch_dir)


KILLED_PARENT = """
import os, signal, sys
from askchain.db import open_database
from askchain.db.worker import WORKERS
open_database(sys.argv[1]).execute("SELECT 1")
(worker,) = WORKERS._idle
print(worker.process.pid, worker.scratch_dir, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def running(pid):
    """Alive, not a zombie left for a parent that is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return "\tZ" not in next(line for line in status if line.startswith("State:"))
    except FileNotFoundError:
        return False
