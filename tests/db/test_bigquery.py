"""BigQuery engine: pure decisions unit-tested; the engine end to end against bqemulator on loopback.

The emulator lives in its own venv (scripts/setup_bqemulator.sh); its location can be overridden with
ASKCHAIN_BQEMU_VENV. It reports 0 bytes on dry runs and does not enforce the byte cap, so the refusal
over the cap is tested on `check_scan` with dry-run figures.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.db import open_database
from askchain.db.bigquery import check_scan, example_values, human_bytes
from askchain.errors import DatabaseError, QueryFailed, QueryRefused

REPO = Path(__file__).resolve().parents[2]
BQEMU_VENV = Path(os.environ.get("ASKCHAIN_BQEMU_VENV", REPO / ".venv-bqemu"))
PROJECT = "test-project"
DATASET = "bigquery-public-data.crypto_ethereum"  # the engine's default dataset


# ---- pure decisions ------------------------------------------------------------------------------
def test_human_bytes_uses_decimal_units():
    assert human_bytes(0) == "0 B"
    assert human_bytes(999) == "999 B"
    assert human_bytes(1_500) == "1.5 KB"
    assert human_bytes(10_000_000_000) == "10 GB"
    assert human_bytes(1_234_000_000_000) == "1.2 TB"
    assert human_bytes(5_000_000_000_000_000) == "5000 TB"


def test_check_scan_refuses_over_the_byte_limit():
    limit = 10_000_000_000
    check_scan("SELECT", limit, limit)  # exactly at the limit is allowed
    check_scan("SELECT", None, limit)  # no estimate: the job's own cap still applies
    with pytest.raises(QueryRefused) as refused:
        check_scan("SELECT", 1_200_000_000_000, limit)
    assert str(refused.value) == "query would scan 1.2 TB, over the 10 GB limit (db.maximum_bytes_billed)"


@pytest.mark.parametrize("statement_type", ["INSERT", "CREATE_TABLE", "SCRIPT", "DELETE"])
def test_check_scan_refuses_statements_other_than_select(statement_type):
    with pytest.raises(QueryRefused, match=statement_type):
        check_scan(statement_type, 0, 10)


def test_table_metadata_flattens_records_and_reads_constraints():
    bigquery = pytest.importorskip("google.cloud.bigquery")
    from askchain.db.bigquery import table_from_metadata

    meta = bigquery.Table.from_api_repr({
        "tableReference": {"projectId": "p", "datasetId": "d", "tableId": "blocks"},
        "description": "Ethereum blocks",
        "numRows": "42",
        "schema": {"fields": [
            {"name": "number", "type": "INTEGER", "mode": "REQUIRED", "description": "block number"},
            {"name": "miner", "type": "STRING", "description": "miner address"},
            {"name": "is_final", "type": "BOOLEAN"},
            {"name": "topics", "type": "STRING", "mode": "REPEATED"},
            {"name": "withdrawals", "type": "RECORD", "mode": "REPEATED", "fields": [
                {"name": "amount", "type": "NUMERIC", "description": "in gwei"},
                {"name": "meta", "type": "RECORD", "fields": [{"name": "tag", "type": "STRING"}]},
            ]},
            {"name": "header", "type": "RECORD", "fields": [{"name": "size", "type": "FLOAT"}]},
        ]},
        "tableConstraints": {
            "primaryKey": {"columns": ["number"]},
            "foreignKeys": [{
                "name": "fk_miner",
                "referencedTable": {"projectId": "p", "datasetId": "d", "tableId": "miners"},
                "columnReferences": [{"referencingColumn": "miner", "referencedColumn": "address"}],
            }],
        },
    })
    table = table_from_metadata(meta)
    assert (table.name, table.query_name, table.row_count, table.description) == ("blocks", "p.d.blocks", 42, "Ethereum blocks")
    assert [(c.name, c.type) for c in table.columns] == [
        ("number", "INT64"), ("miner", "STRING"), ("is_final", "BOOL"), ("topics", "ARRAY<STRING>"),
        ("withdrawals.amount", "NUMERIC"), ("withdrawals.meta.tag", "STRING"), ("header.size", "FLOAT64"),
    ]
    amount = table.column("withdrawals.amount")
    assert amount.description == "in gwei; inside repeated withdrawals: reach it with UNNEST(withdrawals)"
    assert "UNNEST(withdrawals)" in table.column("withdrawals.meta.tag").description
    assert table.column("header.size").description is None  # a plain record needs no UNNEST
    assert table.primary_key == ["number"]
    assert [(fk.columns, fk.ref_table, fk.ref_columns) for fk in table.foreign_keys] == [(["miner"], "miners", ["address"])]


def test_example_values_walk_nested_rows():
    rows = [
        {"number": 1, "withdrawals": [{"amount": 5}, {"amount": 7}], "miner": None},
        {"number": 1, "withdrawals": [{"amount": 7}, {"amount": 9}], "miner": "0xab"},
    ]
    assert example_values(rows, "number", 3) == [1]
    assert example_values(rows, "withdrawals.amount", 2) == [5, 7]
    assert example_values(rows, "miner", 3) == ["0xab"]


def test_url_options_are_checked():
    pytest.importorskip("google.cloud.bigquery")
    with pytest.raises(DatabaseError, match="unknown BigQuery URL option"):
        open_database("bigquery://p?datset=x")
    with pytest.raises(DatabaseError, match="needs a project"):
        open_database("bigquery:///d")


# ---- end to end against the emulator -------------------------------------------------------------
@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """bqemulator on a loopback port it picks itself; yields its REST endpoint."""
    pytest.importorskip("google.cloud.bigquery")
    exe = BQEMU_VENV / "bin" / "bqemulator"
    if not exe.exists():
        pytest.skip(f"BigQuery emulator not installed in {BQEMU_VENV}: run scripts/setup_bqemulator.sh")
    workdir = tmp_path_factory.mktemp("bqemu")
    log_path = workdir / "emulator.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(exe), "start", "--rest-host", "127.0.0.1", "--rest-port", "0", "--grpc-host", "127.0.0.1",
             "--grpc-port", "0", "--project", PROJECT, "--ephemeral", "--log-format", "console"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=workdir,
        )
    try:
        yield _wait_for_emulator(proc, log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_for_emulator(proc: subprocess.Popen, log_path: Path, timeout_s: float = 90) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"bqemulator exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log_path.read_text(errors="replace"))
        if found:
            try:
                with urllib.request.urlopen(found.group(1) + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        return found.group(1)
            except OSError:
                pass
        time.sleep(0.3)
    pytest.fail(f"bqemulator did not answer within {timeout_s:g} s:\n{log_path.read_text()[-3000:]}")


def _client(endpoint: str, project: str):
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    return bigquery.Client(project=project, credentials=AnonymousCredentials(), client_options=ClientOptions(api_endpoint=endpoint))


@pytest.fixture(scope="module")
def seeded(emulator):
    """A small crypto_ethereum: blocks with a repeated record, and transactions."""
    from google.cloud import bigquery

    client = _client(emulator, "bigquery-public-data")
    client.create_dataset("crypto_ethereum", exists_ok=True)
    blocks = bigquery.Table(f"{DATASET}.blocks", schema=[
        bigquery.SchemaField("number", "INTEGER", mode="REQUIRED", description="The block number"),
        bigquery.SchemaField("miner", "STRING", description="The address of the beneficiary"),
        bigquery.SchemaField("timestamp", "TIMESTAMP"),
        bigquery.SchemaField("withdrawals", "RECORD", mode="REPEATED", fields=[
            bigquery.SchemaField("index", "INTEGER"), bigquery.SchemaField("amount", "NUMERIC"),
        ]),
    ])
    blocks.description = "Ethereum blocks"
    blocks = client.create_table(blocks)
    transactions = client.create_table(bigquery.Table(f"{DATASET}.transactions", schema=[
        bigquery.SchemaField("hash", "STRING", mode="REQUIRED"),
        bigquery.SchemaField("block_number", "INTEGER"),
        bigquery.SchemaField("value", "NUMERIC", description="Value transferred in Wei"),
    ]))
    assert client.insert_rows_json(blocks, [
        {"number": n, "miner": f"0x{n % 2:040x}", "timestamp": f"2024-01-0{n}T00:00:00Z",
         "withdrawals": [{"index": n, "amount": str(n * 10)}]}
        for n in (1, 2, 3)
    ]) == []
    assert client.insert_rows_json(transactions, [
        {"hash": f"0x{i:064x}", "block_number": 1 + i % 3, "value": str(i * 1000)} for i in range(5)
    ]) == []
    return emulator


@pytest.fixture
def engine(seeded):
    engine = open_database(f"bigquery://{PROJECT}?endpoint={seeded}", get_settings().with_overrides(db=dict(timeout_s=30, max_rows=100)).db)
    yield engine
    engine.close()


def _block_count(endpoint: str) -> int:
    return _client(endpoint, PROJECT).get_table(f"{DATASET}.blocks").num_rows


@pytest.mark.bigquery
def test_introspection_reads_metadata_of_the_default_dataset(engine):
    schema = engine.schema()
    assert schema.dialect == "bigquery" and schema.name == "ethereum"  # the Ethereum domain's dataset, by its id
    assert "wei" in schema.notes, "the domain's notes travel with its BigQuery dataset"
    assert [t.name for t in schema.tables] == ["blocks", "transactions"]
    blocks = schema.table(f"{DATASET}.blocks")
    assert blocks.query_name is None, "prompts show short names: the default dataset resolves them"
    assert blocks.description == "Ethereum blocks" and blocks.row_count == 3
    assert [(c.name, c.type) for c in blocks.columns] == [
        ("number", "INT64"), ("miner", "STRING"), ("timestamp", "TIMESTAMP"),
        ("withdrawals.index", "INT64"), ("withdrawals.amount", "NUMERIC"),
    ]
    assert blocks.column("number").description == "The block number"
    assert all(not c.examples for t in schema.tables for c in t.columns)  # no reads unless asked
    assert "CREATE TABLE transactions (" in schema.ddl()
    assert engine.qualified_sql("SELECT COUNT(*) FROM transactions") == f"SELECT COUNT(*) FROM `{DATASET}.transactions`"


@pytest.mark.bigquery
def test_qualified_names_in_prompts_when_short_names_are_off(seeded):
    limits = get_settings().with_overrides(db=dict(short_table_names=False)).db
    engine = open_database(f"bigquery://{PROJECT}?endpoint={seeded}", limits)
    assert engine.schema().table("blocks").query_name == f"{DATASET}.blocks"
    assert f"CREATE TABLE `{DATASET}.transactions`" in engine.schema().ddl()
    assert engine.prompt_sql(f"SELECT 1 FROM `{DATASET}.blocks`") == f"SELECT 1 FROM `{DATASET}.blocks`"


@pytest.mark.bigquery
def test_examples_option_reads_values_without_a_query(seeded):
    engine = open_database(f"bigquery://{PROJECT}/{DATASET}?endpoint={seeded}&examples=2")
    blocks = engine.schema().table("blocks")
    numbers = blocks.column("number").examples
    assert len(numbers) == 2 and set(numbers) <= {1, 2, 3}
    assert len(blocks.column("withdrawals.amount").examples) == 2
    assert len(engine.example_rows("blocks", 2)) == 2


@pytest.mark.bigquery
def test_dry_run_reports_type_and_bytes(engine):
    plan = engine.dry_run("SELECT count(*) FROM blocks")
    assert plan.statement_type == "SELECT"
    assert isinstance(plan.total_bytes_processed, int)


@pytest.mark.bigquery
def test_execute_returns_rows_and_bytes(engine):
    result = engine.execute(
        f"SELECT b.number, COUNT(t.hash) AS txs FROM `{DATASET}.blocks` AS b "
        f"JOIN `{DATASET}.transactions` AS t ON t.block_number = b.number GROUP BY b.number ORDER BY b.number"
    )
    assert result.columns == ["number", "txs"]
    assert result.rows == [(1, 2), (2, 2), (3, 1)]
    assert not result.truncated
    assert isinstance(result.bytes_processed, int)
    assert result.as_dict()["bytes_processed"] == result.bytes_processed
    capped = engine.execute("SELECT hash FROM transactions ORDER BY hash", max_rows=2)  # default dataset resolves it
    assert len(capped.rows) == 2 and capped.truncated


@pytest.mark.bigquery
def test_byte_cap_refusal_when_the_emulator_reports_bytes(seeded):
    engine = open_database(f"bigquery://{PROJECT}?endpoint={seeded}", get_settings().with_overrides(db=dict(maximum_bytes_billed=1)).db)
    sql = "SELECT miner FROM blocks"
    if not engine.dry_run(sql).total_bytes_processed:
        pytest.skip("the emulator reports 0 bytes on dry runs; test_check_scan_refuses_over_the_byte_limit covers it")
    with pytest.raises(QueryRefused, match="db.maximum_bytes_billed"):
        engine.execute(sql)


@pytest.mark.bigquery
def test_guard_refuses_writes_before_the_server(engine, seeded, monkeypatch):
    def no_server(*args, **kwargs):
        raise AssertionError("the guard let a write reach BigQuery")

    monkeypatch.setattr(engine._client, "query", no_server)
    with pytest.raises(QueryRefused, match="read-only"):
        engine.execute("DELETE FROM blocks WHERE TRUE")
    monkeypatch.undo()
    assert _block_count(seeded) == 3


@pytest.mark.bigquery
def test_dry_run_statement_type_is_a_second_barrier(engine, seeded):
    with pytest.raises(QueryRefused, match="BigQuery reports statement type INSERT"):
        engine._run("INSERT INTO blocks (number) VALUES (99)", max_rows=10, timeout_s=30)
    assert engine.execute("SELECT COUNT(*) FROM blocks WHERE number = 99").rows == [(0,)]


@pytest.mark.bigquery
def test_errors_are_one_line(engine, seeded):
    with pytest.raises(QueryFailed) as failed:
        engine.execute("SELECT nope FROM missing_table")
    assert "missing_table" in str(failed.value) and "\n" not in str(failed.value)
    with pytest.raises(DatabaseError) as missing:
        open_database(f"bigquery://{PROJECT}/no_such_dataset?endpoint={seeded}")
    assert "no_such_dataset" in str(missing.value) and "\n" not in str(missing.value)
