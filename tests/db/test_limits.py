"""Time, memory and row caps on the local engines: a runaway query is stopped within its time limit plus 2 s, and
neither askchain's process nor the worker running the query grows past the memory cap (issue 44 measured a query
building a huge string at 5.8-8 GB and a 30 s limit overrunning to 48 s)."""

import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from pydantic import ValidationError

from askchain.config import DBSettings, get_settings
from askchain.db import open_database
from askchain.db.base import take_rows
from askchain.db.worker import WORKERS
from askchain.errors import QueryFailed, QueryRefused

TIMEOUT_S = 1
MEMORY_MB = 512
#: The memory check looks every 50 ms; a runaway allocating fast can add this much before it is stopped.
OVERSHOOT_MB = 400

SQLITE_RUNAWAYS = {
    "one huge value": "SELECT length(replace(hex(zeroblob(400000000)), '0', 'ab'))",
    "recursive CTE doubling a string": "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r "
                                       "WHERE n < 40) SELECT max(length(s)) FROM r",
    "rows of big blobs": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT zeroblob(50000000) FROM r",
    "cross join explosion": "SELECT count(*) FROM singer a, singer b, singer c, singer d, singer e, singer f, singer g, "
                            "singer h, singer i, singer j, singer k, singer l",
    # one step that SQLite cannot interrupt (a naive substring search, ~10 s): the worker is stopped after the grace
    "one long uninterruptible step": "SELECT instr(hex(zeroblob(30000000)) || '1', hex(zeroblob(4000)) || '1')",
}
DUCKDB_RUNAWAYS = {
    "strings outside DuckDB's memory limit": "SELECT max(length(repeat(range::VARCHAR, 1000000))) FROM range(100000)",
    "one huge value": "SELECT length(repeat('x', 2000000000))",
    "recursive CTE doubling a string": "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r "
                                       "WHERE n < 40) SELECT max(length(s)) FROM r",
    "cross join explosion": "SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range * b.range = -1",
    # lpad builds its value in one step DuckDB does not interrupt (~4 s, ~650 MB): stopped after the grace
    "one long uninterruptible step": "SELECT length(lpad('x', 300000000, 'y'))",
}


@pytest.fixture(autouse=True)
def reaped_workers():
    """Each test starts and ends with no worker: one left idle by an earlier module (two queries at once leave two)
    would be the one a test watches instead of its own."""
    WORKERS.shutdown()
    yield
    WORKERS.shutdown()


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory):
    """4M distinct labels: grouping them needs more than the 256 MB a 512 MB cap leaves DuckDB."""
    path = tmp_path_factory.mktemp("duckdb") / "numbers.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE numbers AS SELECT range AS n, md5(range::VARCHAR) AS label FROM range(4000000)")
    return path


def capped(**db):
    return get_settings().with_overrides(db=dict(timeout_s=TIMEOUT_S, memory_limit_mb=MEMORY_MB) | db).db


def peak_mb(who) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


class HighWaterMark(threading.Thread):
    """The largest resident memory (VmHWM) a worker process reports until it ends: its own peak, where
    RUSAGE_CHILDREN would also count every child this test process reaped before (a model run in a CLI test)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.status, self.peak_mb = Path(f"/proc/{pid}/status"), 0.0

    def run(self) -> None:
        while True:
            try:
                line = next(l for l in self.status.read_text().splitlines() if l.startswith("VmHWM:"))
            except (OSError, StopIteration):  # ended (a zombie has no memory left to report)
                return
            self.peak_mb = max(self.peak_mb, int(line.split()[1]) / 1024)
            time.sleep(0.01)


def stop_runaway(engine, sql, memory_mb=MEMORY_MB):
    engine.execute("SELECT 1")  # a worker ready: its start (~0.2 s, once per process) is not the query's time
    (worker,) = WORKERS._idle
    watch = HighWaterMark(worker.process.pid)
    watch.start()
    parent_before = peak_mb(resource.RUSAGE_SELF)
    started = time.monotonic()
    with pytest.raises(QueryFailed) as failed:
        engine.execute(sql)
    elapsed = time.monotonic() - started
    WORKERS.shutdown()
    watch.join(timeout=5)
    assert elapsed < TIMEOUT_S + 2, f"stopped after {elapsed:.1f} s: {failed.value}"
    assert 0 < watch.peak_mb < memory_mb + OVERSHOOT_MB, "the worker stayed under its cap"
    assert peak_mb(resource.RUSAGE_SELF) - parent_before < 100, "askchain's own process did not grow"
    assert engine.execute("SELECT 42 AS answer").rows == [(42,)], "the next query runs in a fresh worker"
    return str(failed.value)


@pytest.mark.parametrize("sql", SQLITE_RUNAWAYS.values(), ids=SQLITE_RUNAWAYS.keys())
def test_sqlite_runaways_stop_within_their_limits(concert_db_copy, sql):
    message = stop_runaway(open_database(str(concert_db_copy), capped()), sql)
    assert any(reason in message for reason in ("time limit", "memory limit", "too big")), message


@pytest.mark.parametrize("sql", DUCKDB_RUNAWAYS.values(), ids=DUCKDB_RUNAWAYS.keys())
def test_duckdb_runaways_stop_within_their_limits(duckdb_file, sql):
    # the long step needs more memory than the others' cap, to be stopped for its time and not its memory
    memory_mb = 1024 if "lpad" in sql else MEMORY_MB
    message = stop_runaway(open_database(str(duckdb_file), capped(memory_limit_mb=memory_mb)), sql, memory_mb)
    assert any(reason in message for reason in ("time limit", "memory limit", "Out of Memory")), message
    if "lpad" in sql:
        assert "time limit" in message


def test_duckdb_caps_are_set_and_locked_in_the_worker(duckdb_file):
    engine = open_database(str(duckdb_file), capped(threads=1))
    columns, rows, _, _ = engine._run("SELECT current_setting('memory_limit'), current_setting('threads'), "
                                      "current_setting('enable_external_access'), current_setting('lock_configuration')",
                                      max_rows=10, timeout_s=5)
    assert rows == [("256.0 MiB", 1, False, True)]  # 512 MB less the worker's headroom
    for change in ("SET memory_limit = '100GB'", "SET threads = 8", "RESET memory_limit", "SET temp_directory = '/tmp'",
                   "SET enable_external_access = true"):
        with pytest.raises(QueryFailed, match="Cannot change configuration|not allowed|locked"):
            engine._run(change, max_rows=10, timeout_s=5)


def test_duckdb_spills_into_the_worker_not_beside_the_database(duckdb_file):
    engine = open_database(str(duckdb_file), capped(timeout_s=60))
    result = engine.execute("SELECT count(*) FROM (SELECT label, count(*) FROM numbers GROUP BY label ORDER BY label)")
    assert result.rows == [(4_000_000,)]
    assert sorted(p.name for p in duckdb_file.parent.iterdir()) == [duckdb_file.name]


def test_sqlite_value_length_is_capped(concert_db_copy):
    engine = open_database(str(concert_db_copy), capped(max_value_mb=1))
    assert engine.execute("SELECT length(zeroblob(1000000))").rows == [(1_000_000,)]
    with pytest.raises(QueryFailed, match="too big"):
        engine.execute("SELECT zeroblob(2000000)")


def test_rows_from_a_remote_database_stop_at_the_memory_limit():
    """PostgreSQL and BigQuery rows arrive in askchain's own process: they are counted as they come."""
    small = iter([("a" * 100,)] * 10)
    assert len(take_rows(small, 5, memory_limit_mb=1)) == 6  # one more than the cap: the result was cut
    huge = ((("x" * 2**20),) for _ in range(10**6))  # a 1 MB value per row, a million rows, made only as read
    with pytest.raises(QueryFailed, match="8 MB memory limit: its first 9 rows"):
        take_rows(huge, 10_000, memory_limit_mb=8)


@pytest.mark.parametrize("max_rows", [-1, 0, 1_000_001])
def test_row_caps_outside_the_ceiling_are_refused(concert_db_copy, max_rows):
    with pytest.raises(QueryRefused, match="between 1 and 1000000"):
        open_database(str(concert_db_copy)).execute("SELECT * FROM singer", max_rows=max_rows)


def test_the_ceiling_admits_its_own_value(concert_db_copy):
    result = open_database(str(concert_db_copy)).execute("SELECT * FROM singer", max_rows=1_000_000)
    assert len(result.rows) == 6 and not result.truncated


def test_a_default_row_cap_above_the_ceiling_is_a_settings_error():
    values = get_settings().db.model_dump() | {"max_rows": 2_000_000, "max_rows_ceiling": 1_000_000}
    with pytest.raises(ValidationError, match="above max_rows_ceiling"):
        DBSettings.model_validate(values)


@pytest.mark.parametrize("max_rows", ["-1", "2000000"])
def test_cli_row_caps_outside_the_ceiling_are_one_line_and_exit_2(concert_db, max_rows):
    out = subprocess.run([sys.executable, "-m", "askchain.cli", "sql", "--db", str(concert_db), "SELECT 1",
                          "--max-rows", max_rows], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
