"""PostgreSQL engine against a real throwaway server: initdb + pg_ctl on a free loopback port.

Needs the server binaries (scripts/setup_postgres.sh; ASKCHAIN_PG_BIN overrides where they are). PostgreSQL
refuses to run as root, so as root the cluster belongs to the `postgres` user (or `nobody`).

Connected as a role that may only read (created with the SQL the refusal and the README give), and as a superuser
the settings accept (`db.allow_unsafe_postgres_role`); both are attacked, and the server's files, replication slots,
settings, locks, large objects and sessions are checked afterwards as the administrator.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import secrets
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from sqlglot.dialects.postgres import Postgres

from askchain.config import get_settings
from askchain.db import open_database
from askchain.db.guard import check_read_only
from askchain.db.postgres import select_only_role
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
GRANT USAGE ON SCHEMA analytics TO reader;
GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO reader;
-- roles that may do more than read, each for one reason
CREATE ROLE writer LOGIN;
GRANT SELECT, UPDATE (miner) ON blocks TO writer;
CREATE ROLE file_reader LOGIN IN ROLE pg_read_server_files;
CREATE ROLE lo_caller LOGIN;
GRANT EXECUTE ON FUNCTION lo_import(text) TO lo_caller;
CREATE ROLE replicator LOGIN REPLICATION;
"""
GUARD_DATA = Path(__file__).resolve().parents[2] / "src/askchain/db/guard_postgres.yaml"


@dataclass
class Cluster:
    admin_url: str
    #: The server's own directory (its data and log), where the attacks aim to read a secret and to write files.
    root: Path
    secret: str

    def url(self, role: str) -> str:
        return self.admin_url.replace("admin@", f"{role}@", 1)

    @property
    def secret_file(self) -> Path:
        return self.root / "secret.txt"


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
def cluster():
    """A fresh cluster with trust auth on loopback only (no Unix socket), a role `reader` that may only read, and a
    secret file only the server's user may read."""
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
        cluster = Cluster(url, Path(root), secrets.token_hex(16))
        cluster.secret_file.write_text(cluster.secret)
        cluster.secret_file.chmod(0o600)
        if run_as:
            os.chown(cluster.secret_file, run_as["user"], run_as["group"])
        _seed(url)
        yield cluster
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
        conn.execute(select_only_role("postgres", "public", "reader"))  # as the refusal and the README say
        conn.execute(SEED)


@pytest.fixture(scope="module")
def server(cluster):
    """The administrator's URL: a superuser."""
    return cluster.admin_url


def _count(url: str, table: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _limits(**db):
    return get_settings().with_overrides(db=dict(timeout_s=10, max_rows=100, **db)).db


@pytest.fixture
def engine(cluster):
    """Connected as the role that may only read."""
    return open_database(cluster.url("reader"), _limits())


@pytest.fixture
def unsafe_engine(server):
    """Connected as the superuser, the risk accepted in the settings: the guard is the only barrier."""
    return open_database(server, _limits(allow_unsafe_postgres_role=True))


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
def test_schema_option_describes_and_searches_that_schema(cluster):
    engine = open_database(cluster.url("reader") + "?schema=analytics")
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
def test_server_refuses_writes_the_guard_missed(unsafe_engine, server, sql):
    with pytest.raises(QueryRefused, match="read-only transaction"):
        unsafe_engine._run(sql, max_rows=10, timeout_s=10)
    assert (_count(server, "blocks"), _count(server, "transactions")) == (3, 5)


@pytest.mark.postgres
def test_function_writes_are_refused_through_execute(unsafe_engine, server):
    with pytest.raises(QueryRefused, match="nextval"):
        unsafe_engine.execute("SELECT nextval('transfers_id_seq')")
    with pytest.raises(QueryRefused, match="set_config"):
        unsafe_engine.execute("SELECT set_config('transaction_read_only', 'off', true)")
    with pytest.raises(QueryFailed):  # past the guard, a query still cannot switch its transaction to read-write
        unsafe_engine._run("SELECT set_config('transaction_read_only', 'off', true)", max_rows=10, timeout_s=5)


@pytest.mark.postgres
def test_statement_timeout_stops_slow_queries(engine):
    with pytest.raises(QueryFailed, match="0.5 s time limit"):
        engine.execute("SELECT count(*) FROM generate_series(1, 10000000000)", timeout_s=0.5)
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


# ---- roles ---------------------------------------------------------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.parametrize("role,reason", [
    ("admin", "is a superuser"),
    ("writer", "may write public.blocks"),  # UPDATE on one column is enough
    ("file_reader", "is a member of pg_read_server_files"),
    ("lo_caller", "may call lo_import()"),
    ("replicator", "may start replication"),
])
def test_roles_that_may_do_more_than_read_are_refused_on_connect(cluster, role, reason):
    with pytest.raises(DatabaseError) as refused:
        open_database(cluster.url(role), _limits())
    message = str(refused.value)
    assert f'role "{role}" {reason}' in message or f", {reason}" in message, message
    assert "\n" not in message and "CREATE ROLE" in message and "db.allow_unsafe_postgres_role: true" in message


@pytest.mark.postgres
def test_cli_refuses_a_superuser_with_one_line_and_exit_code_2(server):
    done = subprocess.run([sys.executable, "-m", "askchain.cli", "sql", "--db", server, "SELECT 1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "is a superuser" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---- attacks -------------------------------------------------------------------------------------------------------

# (SQL, whether PostgreSQL itself stops it for the role that may only read). {secret}, {root} and {pid} (an
# administrator's session) are filled in per cluster.
ATTACKS = [
    ("SELECT query_to_xml('select pg_read_file(''{secret}'')', true, true, '')", True),
    ("SELECT query_to_xml_and_xmlschema('select * from pg_ls_dir(''{root}'')', true, true, '')", True),
    ("SELECT table_to_xml('pg_authid', true, true, '')", True),
    ("SELECT xpath('/row', query_to_xml('select pg_read_file(''{secret}'')', true, true, ''))", True),
    ('SELECT U&"pg\\005fread\\005ffile"(\'{secret}\')', True),
    ('SELECT U&"pg!005fread!005ffile" UESCAPE \'!\' (\'{secret}\')', True),
    ('SELECT "PG_READ_FILE"(\'{secret}\')', True),
    ("SELECT pg_catalog.pg_read_file('{secret}')", True),
    ("SELECT pg_read_binary_file('{secret}')", True),
    ("SELECT * FROM pg_ls_dir('{root}')", True),
    ("SELECT pg_stat_file('{secret}')", True),
    ("SELECT 1 AS x$$, pg_read_file('{secret}') --$$", True),
    ("SELECT pg_create_physical_replication_slot('askchain_probe')", True),
    ("SELECT pg_create_logical_replication_slot('askchain_probe', 'test_decoding')", True),
    ("SELECT set_config('log_statement', 'all', false)", True),
    ("SELECT pg_reload_conf()", True),
    ("SELECT pg_terminate_backend({pid})", True),
    ("SELECT pg_advisory_lock(42)", False),  # a session lock: released when askchain's connection closes
    ("COPY (SELECT 1) TO '{root}/copied.txt'", True),
    ("COPY (SELECT 1) TO PROGRAM 'touch {root}/program-ran'", True),
    ("COPY blocks TO '{root}/copied.txt'", True),
    ("SELECT lo_import('{secret}')", True),
    ("SELECT lo_export(lo_from_bytea(0, 'x'), '{root}/exported.bin')", True),
    ("SELECT lo_from_bytea(0, 'x')", False),  # allowed in a read-only transaction; gone with its rollback
    ("SELECT rolname, rolpassword FROM pg_authid", True),
    ("SELECT * FROM pg_catalog.pg_shadow", True),
    ("SELECT * FROM pg_hba_file_rules", True),
    ("SELECT * FROM pg_file_settings", True),
    ("SELECT query FROM pg_stat_activity", False),  # readable by anyone; other roles' SQL shows as hidden
    ("SELECT setting FROM pg_settings WHERE name = 'data_directory'", False),
    ('SELECT * FROM U&"pg\\005fauthid"', True),
    ("SELECT * FROM information_schema.tables", False),
]


@dataclass
class ServerState:
    settings: list
    auto_conf: bytes
    files: list


@pytest.fixture(scope="module")
def bystander(server):
    """An administrator's session the attacks try to end."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        yield conn


def _server_state(cluster: Cluster) -> ServerState:
    import psycopg

    with psycopg.connect(cluster.admin_url) as conn:
        settings = conn.execute("SELECT name, setting FROM pg_settings ORDER BY name").fetchall()
    files = sorted(p.name for p in cluster.root.iterdir())
    return ServerState(settings, (cluster.root / "data/postgresql.auto.conf").read_bytes(), files)


def _assert_unharmed(cluster: Cluster, before: ServerState, bystander) -> None:
    import psycopg

    assert _server_state(cluster) == before  # no file written, no server setting changed
    with psycopg.connect(cluster.admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0] == 0
    assert bystander.execute("SELECT 1").fetchone() == (1,)


def _attack(template: str, cluster: Cluster, bystander) -> str:
    return template.format(secret=cluster.secret_file, root=cluster.root, pid=bystander.info.backend_pid)


@pytest.mark.postgres
@pytest.mark.parametrize("who", ["reader", "unsafe superuser"])
@pytest.mark.parametrize("template,_", ATTACKS)
def test_attacks_are_refused_and_leave_the_server_unharmed(cluster, bystander, engine, unsafe_engine, who, template, _):
    target = engine if who == "reader" else unsafe_engine
    before = _server_state(cluster)
    with pytest.raises(QueryRefused) as refused:
        target.execute(_attack(template, cluster, bystander))
    assert "\n" not in str(refused.value) and cluster.secret not in str(refused.value)
    _assert_unharmed(cluster, before, bystander)


@pytest.mark.postgres
@pytest.mark.parametrize("template", [sql for sql, server_stops_it in ATTACKS if server_stops_it])
def test_without_the_guard_postgres_itself_stops_a_role_that_may_only_read(cluster, bystander, engine, template):
    """Defence in depth: what the role check buys. Run past the guard, in askchain's read-only transaction."""
    import psycopg

    before = _server_state(cluster)
    with engine._transaction() as conn, pytest.raises(psycopg.Error) as failed:
        conn.execute(_attack(template, cluster, bystander))
    assert cluster.secret not in str(failed.value)
    _assert_unharmed(cluster, before, bystander)


# ---- what may be read and called -----------------------------------------------------------------------------------

ANALYTICS = [
    ("SELECT b.miner, count(*) AS txs, sum(t.value) AS wei, avg(t.value) AS mean, min(t.value), max(t.value) "
     "FROM blocks b JOIN transactions t ON t.block_number = b.number GROUP BY b.miner ORDER BY b.miner", 2),
    ("SELECT date_trunc('day', timestamp) AS day, extract(hour FROM timestamp), date_part('minute', timestamp), "
     "timestamp::date, date(timestamp), to_char(timestamp, 'YYYY-MM-DD'), age(timestamp, timestamp), "
     "timestamp > now() - interval '30 days', current_date > '2000-01-01' FROM blocks", 3),
    ("SELECT number, row_number() OVER w, rank() OVER w, dense_rank() OVER w, lag(number) OVER w, lead(number) OVER w, "
     "sum(number) OVER (ORDER BY number ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), ntile(2) OVER w "
     "FROM blocks WINDOW w AS (PARTITION BY miner ORDER BY number)", 3),
    ("WITH per_block AS (SELECT block_number, count(*) AS n FROM transactions GROUP BY block_number), "
     "ranked AS (SELECT *, rank() OVER (ORDER BY n DESC) AS r FROM per_block) SELECT * FROM ranked WHERE r = 1", 2),
    ("SELECT lower(miner), upper(miner), substring(miner FROM 1 FOR 6), left(miner, 4), right(miner, 4), length(miner), "
     "position('1' IN miner), trim(miner), replace(miner, '0x', ''), split_part(miner, 'x', 2), concat(miner, '!'), "
     "miner || '?', lpad('7', 3, '0'), regexp_replace(miner, '0+', '0'), miner LIKE '0x%', initcap('abc') FROM blocks", 3),
    ("SELECT coalesce(NULL, 1), nullif(1, 2), greatest(1, 2), least(1, 2), round(2.567, 2), abs(-1), power(2, 10), "
     "sqrt(16), ln(10) > 2, floor(1.5), ceil(1.5), mod(7, 3), CASE WHEN random() < 2 THEN 'a' END, cast(1 AS text), 1::numeric", 1),
    ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY value), string_agg(hash, ',' ORDER BY hash), "
     "count(*) FILTER (WHERE value > 1000), array_agg(block_number ORDER BY block_number), bool_or(value > 0), "
     "stddev(value) > 0 FROM transactions", 1),
    ("SELECT topics[1], cardinality(topics), array_length(topics, 1), array_to_string(topics, ','), "
     "'0xddf2' = ANY(topics), jsonb_build_object('n', log_index)->>'n', to_jsonb(topics)->0 FROM logs", 1),
    ("SELECT g, u FROM generate_series(1, 3) g CROSS JOIN unnest(ARRAY['a', 'b']) u "
     "WHERE g IN (SELECT number FROM blocks) AND EXISTS (SELECT 1 FROM transactions)", 6),
    ("SELECT t.hash FROM transactions t LEFT JOIN logs l ON l.transaction_hash = t.hash WHERE l.log_index IS NULL "
     "UNION ALL SELECT hash FROM big_transactions ORDER BY 1", 7),
    ('SELECT pg_catalog.lower(miner), "lower"(miner), U&"lo\\0077er"(miner) FROM blocks', 3),
]


@pytest.mark.postgres
@pytest.mark.parametrize("who", ["reader", "unsafe superuser"])
@pytest.mark.parametrize("sql,rows", ANALYTICS)
def test_ordinary_analytics_runs(engine, unsafe_engine, who, sql, rows):
    target = engine if who == "reader" else unsafe_engine
    assert len(target.execute(sql).rows) == rows


@pytest.fixture(scope="module")
def catalog(server):
    """The server's built-in functions and system relations, as the administrator sees them."""
    import psycopg

    with psycopg.connect(server) as conn:
        functions = {name for (name,) in conn.execute("SELECT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace")}
        relations = conn.execute(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v', 'm', 'p', 'f')"
        ).fetchall()
    return functions, relations


@pytest.mark.postgres
def test_every_allowed_function_is_a_built_in_of_the_server(catalog):
    listed = [name for group in yaml.safe_load(GUARD_DATA.read_text())["functions"].values() for name in group]
    assert sorted(set(listed) - catalog[0]) == []


@pytest.mark.postgres
def test_calls_sqlglot_reads_as_syntax_name_only_allowed_functions(catalog):
    """sqlglot builds some named calls with parsers of their own (SUBSTRING, POSITION, DECODE), which record no
    position, so the guard judges them as syntax: each that names a server function must be on the list."""
    data = yaml.safe_load(GUARD_DATA.read_text())
    listed = {name for group in data["functions"].values() for name in group}
    parsed_as_syntax = {name.lower() for name in (*Postgres.Parser.FUNCTION_PARSERS, *Postgres.Parser.NO_PAREN_FUNCTION_PARSERS)}
    assert sorted((parsed_as_syntax & catalog[0]) - listed) == []


@pytest.mark.postgres
def test_every_system_relation_is_refused_qualified_or_not(catalog):
    """The guard refuses unqualified pg_* names since pg_catalog comes first on the search path: this holds only if
    every relation there is named pg_*, which the server's own catalog shows."""
    for schema, name in catalog[1]:
        spellings = [f'"{schema}"."{name}"'] + ([f'"{name}"'] if schema == "pg_catalog" else [])
        for spelled in spellings:
            with pytest.raises(QueryRefused, match="system catalogs"):
                check_read_only(f"SELECT * FROM {spelled}", "postgres")



@pytest.mark.postgres
def test_functions_reachable_as_columns_have_no_side_effects(server):
    """PostgreSQL also calls a function of one row written as a column (`t.row_to_json` is row_to_json(t)), which the
    guard sees as a column: every built-in reachable so must be stable or immutable (functions that act on the
    server, read files or take locks are volatile)."""
    import psycopg

    with psycopg.connect(server) as conn:
        volatile = conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_type t ON t.oid = p.proargtypes[0] "
            "WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1 "
            "AND (t.typtype = 'c' OR t.typname IN ('record', 'any', 'anyelement', 'anynonarray', 'anycompatible', "
            "'anycompatiblenonarray')) AND p.provolatile = 'v'"
        ).fetchall()
    assert volatile == []


@pytest.mark.postgres
def test_work_mem_is_a_share_of_the_memory_cap(cluster):
    engine = open_database(cluster.url("reader"), _limits(memory_limit_mb=2048))
    assert engine._run("SHOW work_mem", max_rows=1, timeout_s=5)[1] == [("64MB",)]


@pytest.mark.postgres
def test_rows_of_large_strings_stop_at_the_memory_cap_in_one_line(cluster):
    """1,000 rows of 1 MB strings (1 GB) against a 64 MB cap: stopped once the rows read reach it, not all held."""
    engine = open_database(cluster.url("reader"), _limits(memory_limit_mb=64))
    with pytest.raises(QueryFailed) as stopped:
        engine.execute("SELECT repeat('x', 1000000) AS blob FROM generate_series(1, 1000)", max_rows=1000)
    message = str(stopped.value)
    assert message.startswith("query stopped at the 64 MB memory limit: its first 68 rows") and "\n" not in message
    assert engine.execute("SELECT 1 AS one").rows == [(1,)]  # the connection was released, the next query runs


# ---- a connection lost ---------------------------------------------------------------------------------------------

@pytest.mark.postgres
def test_cli_reports_a_connection_lost_mid_query_in_one_line_with_exit_code_2(cluster):
    """The server ends the session while the query runs (a restart, an administrator, a network cut)."""
    import time

    import psycopg

    slow = "SELECT count(*) FROM generate_series(1, 10000000000) AS s(n)"
    command = subprocess.Popen([sys.executable, "-m", "askchain.cli", "sql", "--db", cluster.url("reader"), slow],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running = ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
               "WHERE application_name = 'askchain' AND state = 'active' AND query LIKE '%generate_series%'")
    with psycopg.connect(cluster.admin_url, autocommit=True) as admin:
        while command.poll() is None and not admin.execute(running).fetchall():  # until the query runs, then end it
            time.sleep(0.05)
    _, err = command.communicate(timeout=120)
    assert command.returncode == 2, err
    assert err.startswith("error: terminating connection") and len(err.strip().splitlines()) == 1, err
