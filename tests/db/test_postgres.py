"""PostgreSQL engine against a real throwaway server: initdb + pg_ctl on a free loopback port.

Needs the server binaries (scripts/setup_postgres.sh; ASKCHAIN_PG_BIN overrides where they are). PostgreSQL
refuses to run as root, so as root the cluster belongs to the `postgres` user (or `nobody`).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.db import open_database
from askchain.errors import DatabaseError, QueryFailed, QueryRefused

SEED = """
CREATE TABLE blocks (
    number bigint PRIMARY KEY,
    miner text NOT NULL,
    "timestamp" timestamptz NOT NULL
);
COMMENT ON TABLE blocks IS 'Ethereum blocks';
COMMENT ON COLUMN blocks.miner IS 'address of the beneficiary';
CREATE TABLE transactions (
    hash text PRIMARY KEY,
    block_number bigint NOT NULL REFERENCES blocks (number),
    value numeric(38, 0) NOT NULL,
    payload bytea
);
CREATE TABLE logs (
    transaction_hash text REFERENCES transactions (hash),
    log_index integer,
    topics text[],
    PRIMARY KEY (transaction_hash, log_index)
);
CREATE TABLE transfers (
    id serial PRIMARY KEY,
    transaction_hash text, log_index integer,
    FOREIGN KEY (transaction_hash, log_index) REFERENCES logs (transaction_hash, log_index)
);
CREATE VIEW big_transactions AS SELECT hash, value FROM transactions WHERE value > 1000;
INSERT INTO blocks SELECT n, '0x' || lpad((n % 2)::text, 40, '0'), timestamptz '2024-01-01' + n * interval '12 seconds'
    FROM generate_series(1, 3) n;
INSERT INTO transactions SELECT '0x' || lpad(i::text, 64, '0'), 1 + i % 3, i * 1000, '\\x00' FROM generate_series(0, 4) i;
INSERT INTO logs VALUES ('0x' || lpad('1', 64, '0'), 0, ARRAY['0xddf2']);
INSERT INTO transfers (transaction_hash, log_index) VALUES ('0x' || lpad('1', 64, '0'), 0);
CREATE SCHEMA analytics;
CREATE TABLE analytics.daily (day date PRIMARY KEY, blocks integer);
INSERT INTO analytics.daily VALUES ('2024-01-01', 3);
"""


def _pg_bin() -> Path | None:
    if os.environ.get("ASKCHAIN_PG_BIN"):
        return Path(os.environ["ASKCHAIN_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """A fresh cluster with trust auth on loopback only (no Unix socket); yields the admin URL."""
    pytest.importorskip("psycopg")
    pg_bin = _pg_bin()
    if pg_bin is None or not (pg_bin / "initdb").exists():
        pytest.skip("PostgreSQL server binaries not found: run scripts/setup_postgres.sh (or set ASKCHAIN_PG_BIN)")
    run_as = {}
    root = tempfile.mkdtemp(prefix="askchain-pg-")  # under /tmp: reachable by the server's user, unlike tmp_path as root
    if os.geteuid() == 0:
        owner = next(u for u in (_user("postgres"), _user("nobody")) if u)
        os.chown(root, owner.pw_uid, owner.pw_gid)
        run_as = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
    data, log = os.path.join(root, "data"), os.path.join(root, "server.log")

    def pg(*args):
        done = subprocess.run([str(pg_bin / args[0]), *args[1:]], capture_output=True, text=True, cwd=root, **run_as)
        return done.returncode, done.stdout + done.stderr

    try:
        code, out = pg("initdb", "-D", data, "-U", "admin", "--auth=trust", "-E", "UTF8", "--no-sync")
        assert code == 0, f"initdb failed:\n{out}"
        for _ in range(3):  # a port found free can be taken before the server binds it
            port = _free_port()
            code, out = pg("pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "-o", f"-h 127.0.0.1 -p {port} -k ''", "start")
            if code == 0:
                break
        assert code == 0, f"pg_ctl start failed:\n{out}\n{Path(log).read_text() if os.path.exists(log) else ''}"
        url = f"postgresql://admin@127.0.0.1:{port}/postgres"
        _seed(url)
        yield url
    finally:
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            pg("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def _user(name: str):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _seed(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SEED)


def _count(url: str, table: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def engine(server):
    return open_database(server, get_settings().with_overrides(db=dict(timeout_s=10, max_rows=100)).db)


@pytest.mark.postgres
def test_introspection_reads_keys_comments_counts_and_examples(engine):
    schema = engine.schema()
    assert schema.dialect == "postgres" and schema.name == "postgres"
    assert [t.name for t in schema.tables] == ["big_transactions", "blocks", "logs", "transactions", "transfers"]
    blocks = schema.table("blocks")
    assert blocks.description == "Ethereum blocks" and blocks.row_count == 3
    assert [(c.name, c.type) for c in blocks.columns] == [
        ("number", "bigint"), ("miner", "text"), ("timestamp", "timestamp with time zone"),
    ]
    assert blocks.primary_key == ["number"]
    assert blocks.column("miner").description == "address of the beneficiary"
    assert sorted(blocks.column("number").examples) == [1, 2, 3]
    transactions = schema.table("transactions")
    assert transactions.column("value").type == "numeric(38,0)"
    assert transactions.column("payload").examples == []  # binary values are not shown
    assert [(fk.columns, fk.ref_table, fk.ref_columns) for fk in transactions.foreign_keys] == [(["block_number"], "blocks", ["number"])]
    logs = schema.table("logs")
    assert logs.primary_key == ["transaction_hash", "log_index"] and logs.column("topics").type == "text[]"
    transfers = schema.table("transfers")
    assert [(fk.columns, fk.ref_table, fk.ref_columns) for fk in transfers.foreign_keys] == [
        (["transaction_hash", "log_index"], "logs", ["transaction_hash", "log_index"])
    ]
    assert schema.table("big_transactions").row_count is None  # views are not counted
    assert "FOREIGN KEY (block_number) REFERENCES blocks(number)" in schema.ddl()
    assert len(engine.example_rows("transactions", 2)) == 2


@pytest.mark.postgres
def test_schema_option_describes_and_searches_that_schema(server):
    engine = open_database(server + "?schema=analytics")
    assert [t.name for t in engine.schema().tables] == ["daily"]
    assert engine.execute("SELECT blocks FROM daily").rows == [(3,)]


@pytest.mark.postgres
def test_query_returns_rows_and_caps_them(engine):
    result = engine.execute(
        "SELECT b.number, count(t.hash) AS txs, sum(t.value) AS wei FROM blocks b "
        "JOIN transactions t ON t.block_number = b.number GROUP BY b.number ORDER BY b.number"
    )
    assert result.columns == ["number", "txs", "wei"]
    assert [(n, c, int(w)) for n, c, w in result.rows] == [(1, 2, 3000), (2, 2, 5000), (3, 1, 2000)]
    assert not result.truncated and result.bytes_processed is None
    capped = engine.execute("SELECT g FROM generate_series(1, 100000) AS g", max_rows=5)
    assert capped.rows == [(1,), (2,), (3,), (4,), (5,)] and capped.truncated


@pytest.mark.postgres
def test_guard_refuses_writes(engine, server):
    with pytest.raises(QueryRefused, match="read-only"):
        engine.execute("DELETE FROM transactions")
    assert _count(server, "transactions") == 5


@pytest.mark.postgres
@pytest.mark.parametrize("sql", [
    "INSERT INTO blocks VALUES (99, '0x', now())",
    "WITH gone AS (DELETE FROM transactions RETURNING hash) SELECT count(*) FROM gone",
    "SELECT nextval('transfers_id_seq')",  # a write hidden in a function the guard cannot know about
])
def test_server_refuses_writes_the_guard_missed(engine, server, sql):
    with pytest.raises(QueryRefused, match="read-only transaction"):
        engine._run(sql, max_rows=10, timeout_s=10)
    assert (_count(server, "blocks"), _count(server, "transactions")) == (3, 5)


@pytest.mark.postgres
def test_function_writes_are_refused_through_execute(engine, server):
    with pytest.raises(QueryRefused, match="nextval"):
        engine.execute("SELECT nextval('transfers_id_seq')")
    with pytest.raises(QueryRefused, match="set_config"):
        engine.execute("SELECT set_config('transaction_read_only', 'off', true)")
    with pytest.raises(QueryFailed):  # past the guard, a query still cannot switch its transaction to read-write
        engine._run("SELECT set_config('transaction_read_only', 'off', true)", max_rows=10, timeout_s=5)


@pytest.mark.postgres
def test_statement_timeout_stops_slow_queries(engine):
    with pytest.raises(QueryFailed, match="0.5 s time limit"):
        engine.execute("SELECT pg_sleep(5)", timeout_s=0.5)
    assert engine.execute("SELECT 1 AS one").rows == [(1,)]  # the next query runs normally


@pytest.mark.postgres
def test_errors_are_one_line(engine, server):
    with pytest.raises(QueryFailed) as failed:
        engine.execute("SELECT nope FROM blocks")
    assert "nope" in str(failed.value) and "\n" not in str(failed.value)
    with pytest.raises(DatabaseError, match="does not exist"):
        open_database(server.rsplit("/", 1)[0] + "/no_such_db")


def test_bad_urls_are_one_line_database_errors():
    pytest.importorskip("psycopg")
    with pytest.raises(DatabaseError) as refused:
        open_database("postgresql://reader:s3cret@127.0.0.1:1/db", get_settings().with_overrides(db=dict(timeout_s=2)).db)
    message = str(refused.value)
    assert "cannot connect to PostgreSQL" in message and "\n" not in message and "s3cret" not in message
    with pytest.raises(DatabaseError, match="bad PostgreSQL URL"):
        open_database("postgresql://127.0.0.1/db?no_such_option=1")
