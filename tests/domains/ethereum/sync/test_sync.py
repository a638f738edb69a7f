"""`askchain eth sync` against a real node (anvil): the synced tables match what the scenario did on the chain, a
question is answered over them with their freshness, and bad input is one line with exit code 2 and no file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

import duckdb
import pytest

from askchain.config import get_settings
from askchain.domains.ethereum.sync.run import SyncRequest, sync


def run_sync(url: str, out, **options):
    request = SyncRequest(url, out, from_block=options.pop("from_block", 0), progress=False, **options)
    return sync(request, get_settings().eth_sync)


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "askchain.cli", "eth", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def synced(chain, tmp_path_factory):
    out = tmp_path_factory.mktemp("sync") / "chain.duckdb"
    report = run_sync(chain.url, out)
    return out, report


def query(path, sql: str):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_every_table_matches_what_was_done_on_the_chain(chain, synced):
    path, report = synced
    e = chain.expected
    assert report.blocks == e["blocks"] and report.transactions == e["transactions"] and report.reorgs == 0
    assert query(path, "SELECT count(*), min(number), max(number), count(DISTINCT hash) FROM blocks") == [
        (e["blocks"], 0, e["blocks"] - 1, e["blocks"])]
    assert query(path, "SELECT count(*), count(*) FILTER (receipt_status = 0), sum(value) FROM transactions") == [
        (e["transactions"], e["failed"], e["ether_wei"])]
    # every block links to the one before it
    assert query(path, "SELECT count(*) FROM blocks b JOIN blocks p ON p.number = b.number - 1 AND p.hash = b.parent_hash") == [
        (e["blocks"] - 1,)]
    assert query(path, "SELECT count(*) FROM token_transfers") == [(e["token_transfers"],)]
    tusd = next(a for a, t in e["tokens"].items() if t[0] == "TUSD")
    assert query(path, f"SELECT sum(CAST(value AS HUGEINT)) FROM token_transfers WHERE token_address = '{tusd}'") == [
        (e["tusd_moved"],)]
    assert query(path, "SELECT count(*) FROM logs WHERE transaction_hash IN (SELECT hash FROM transactions "
                       "WHERE receipt_status = 0)") == [(0,)]
    assert {r[0] for r in query(path, "SELECT address FROM contracts WHERE is_erc20")} == e["erc20"]
    assert {r[0] for r in query(path, "SELECT address FROM contracts WHERE is_erc721")} == e["erc721"]
    tokens = {r[0]: r[1:] for r in query(path, "SELECT address, symbol, name, decimals, total_supply FROM tokens")}
    assert tokens == e["tokens"]
    # a trace per transaction at least, the failed one failed; every creation among the create traces
    assert query(path, "SELECT count(DISTINCT transaction_hash), count(*) FILTER (status = 0 AND trace_address IS NULL), "
                       "count(*) FILTER (trace_type = 'create' AND status = 1) FROM traces") == [
        (e["transactions"], e["failed"], e["contracts"])]


def test_balances_are_fetched_only_on_request_at_the_newest_block(chain, synced, tmp_path):
    path, _ = synced
    assert query(path, "SELECT count(*) FROM balances") == [(0,)]  # the default: not fetched
    fetched = tmp_path / "balances.duckdb"
    run_sync(chain.url, fetched, balances=True)
    stored = dict(query(fetched, "SELECT address, eth_balance FROM balances"))
    for account in chain.accounts[:5]:
        assert stored[account.lower()] == chain.w3.eth.get_balance(account)


BALANCES_SQL = "SELECT COUNT(*) FROM `bigquery-public-data.crypto_ethereum.balances` WHERE eth_balance > 0"


def freshness_of(path, *sqls: str) -> str:
    from askchain.domains.ethereum.engine import EthereumEngine

    engine = EthereumEngine(str(path), get_settings().db)
    try:
        return engine.freshness(sqls)
    finally:
        engine.close()


def test_an_answer_reading_balances_says_what_the_sync_fetched(chain, synced, tmp_path):
    """Beside the freshness line, a line on the balances, only where the answer's SQL reads them: none fetched, or
    fetched at a block before the data's newest."""
    path, _ = synced
    assert "balances" not in freshness_of(path, "SELECT COUNT(*) FROM transactions")
    assert "balances" not in freshness_of(path, "WITH balances AS (SELECT 1 AS n) SELECT n FROM balances")
    line, note = freshness_of(path, "SELECT 1", BALANCES_SQL).splitlines()
    assert line.startswith("data through block 14, ") and note.startswith("balances were not fetched by this sync")
    partial = tmp_path / "partial.duckdb"
    run_sync(chain.url, partial, to_block=10, balances=True)
    run_sync(chain.url, partial)
    note = freshness_of(partial, BALANCES_SQL).splitlines()[1]
    assert note.startswith("balances are the node's at block 10, for only the addresses the synced blocks touched")
    assert note.endswith("blocks after 10 were synced without balances")


def test_the_columns_and_types_are_the_simulated_datasets(synced, tmp_path):
    """The synced file's tables, columns and types are exactly those of the dataset askchain builds by default."""
    from askchain.domains.ethereum.dataset import build_dataset

    path, _ = synced
    simulated = tmp_path / "simulated.duckdb"
    build_dataset(simulated, days=1, scale=0.001, progress=False)
    columns = ("SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
               "ORDER BY table_name, column_index")
    assert query(path, columns) == query(simulated, columns)


def test_yesterday_is_the_datas_last_full_day(chain, synced):
    """The data ends two days ago at 10:00 UTC: its last full day is three days ago, which "yesterday" then means."""
    from askchain.domains.ethereum.engine import EthereumEngine

    path, _ = synced
    day2 = chain.days[1]
    engine = EthereumEngine(str(path), get_settings().db)
    try:
        yesterday = engine.execute("SELECT COUNT(*) FROM transactions WHERE DATE(block_timestamp) = "
                                   "DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)").rows
        freshness = engine.freshness()
    finally:
        engine.close()
    assert yesterday == [(7,)]
    assert freshness.startswith("data through block 14, ") and f"last full day, {day2}" in freshness
    assert str(day2 + timedelta(days=1)) in freshness  # the newest block's day


SCRIPTED_ASK = """
import sys
import askchain.llm.registry
from askchain.llm.fake import ScriptedModel

sql = "```sql\\n" + sys.argv.pop(1) + "\\n```"
script = {"direct": sql, "semantic": "{}", "summarize": "One transaction failed."}
askchain.llm.registry.get_model = lambda name=None, settings=None: ScriptedModel(script)
sys.argv = ["askchain", "ask", *sys.argv[1:]]
from askchain.cli import main
main()
"""


@pytest.mark.parametrize("question, sql, rows, lines", [
    ("How many transactions failed?", "SELECT COUNT(*) AS failed FROM transactions WHERE receipt_status = 0", [[1]], 1),
    ("How many addresses hold ether?", BALANCES_SQL, [[0]], 2),
])
def test_a_question_is_answered_over_the_synced_data_with_its_freshness(synced, question, sql, rows, lines):
    path, _ = synced
    env = {**os.environ, "ASKCHAIN_PIPELINE__EXAMPLES_K": "0", "ASKCHAIN_PIPELINE__VALUE_RETRIEVAL": "false",
           "ASKCHAIN_LLM__CACHE": "false"}
    out = subprocess.run([sys.executable, "-c", SCRIPTED_ASK, sql, "--db", str(path), question,
                          "--method", "baseline", "--json"], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    answer = json.loads(out.stdout)
    assert answer["rows"] == rows
    freshness = answer["freshness"].splitlines()
    assert len(freshness) == lines and freshness[0].startswith("data through block 14, ")
    assert lines == 1 or freshness[1].startswith("balances were not fetched by this sync")


def test_status_shows_the_range_the_newest_time_and_counts(chain, synced):
    path, _ = synced
    out = cli("status", "--db", str(path))
    assert out.returncode == 0, out.stderr
    assert "blocks 0 to 14;" in out.stdout and "transactions" in out.stdout and "chain_id 31337" in out.stdout
    assert f"newest block at {chain.days[2]} 10:00:00 UTC" in out.stdout


@pytest.mark.parametrize("args, env, balances", [
    ([], {}, "balances were not fetched by this sync"),
    (["--balances"], {}, "balances are the node's at block 5,"),
    ([], {"ASKCHAIN_ETH_SYNC__BALANCES": "true"}, "balances are the node's at block 5,"),
    (["--no-balances"], {"ASKCHAIN_ETH_SYNC__BALANCES": "true"}, "balances were not fetched by this sync"),
])
def test_the_cli_prints_counts_freshness_balances_and_stats(chain, tmp_path, args, env, balances):
    out_file = tmp_path / "c.duckdb"
    out = cli("sync", "--rpc", chain.url, "--from-block", "0", "--to-block", "5", "--out", str(out_file), "--stats",
              *args, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "blocks 0 to 5" in lines[0] and lines[2].startswith("data through block 5")
    assert lines[3].startswith(balances)
    assert lines[4].startswith("stats: 6 blocks") and "RPC calls per block" in lines[4]
    assert (query(out_file, "SELECT count(*) FROM balances")[0][0] > 0) == balances.startswith("balances are")


def one_line_refusal(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for word in words:
        assert word in out.stderr, out.stderr


@pytest.mark.parametrize("args, words", [
    (["--rpc", "http://127.0.0.1:9", "--from-block", "0"], ["could not be reached", "127.0.0.1:9"]),
    (["--from-block", "0", "--chain-id", "1"], ["serves chain 31337, not chain 1"]),
    (["--from-block", "1000000"], ["block 1000000 does not exist yet"]),
    (["--from-block", "0", "--to-block", "1000000"], ["block 1000000 does not exist yet"]),
    (["--from-block", "3", "--to-block", "2"], ["after --to-block"]),
    (["--from-block", "0", "--traces", "sometimes"], ["--traces must be one of"]),
    (["--rpc", "ftp://example.org"], ["http:// or https://"]),
])
def test_bad_input_is_one_line_exit_2_and_no_file(chain, tmp_path, args, words):
    out_file = tmp_path / "new.duckdb"
    if "--rpc" not in args:
        args = ["--rpc", chain.url, *args]
    one_line_refusal(cli("sync", *args, "--out", str(out_file)), *words)
    assert not out_file.exists()


def test_a_node_without_traces_is_a_stated_fallback(node_without, tmp_path, chain):
    front = node_without("trace_", "debug_")
    out_file = tmp_path / "notrace.duckdb"
    out = cli("sync", "--rpc", front.url, "--from-block", "0", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    assert "note:" in out.stderr and "offers no traces" in out.stderr and "trace_block" in out.stderr
    assert query(out_file, "SELECT count(*) FROM traces") == [(0,)]
    assert query(out_file, "SELECT count(*) FROM contracts") == [(chain.expected["contracts"],)]  # from receipts
    named = cli("sync", "--rpc", front.url, "--from-block", "0", "--traces", "trace_block", "--out", str(tmp_path / "n.duckdb"))
    one_line_refusal(named, "does not answer trace_block")
    assert not (tmp_path / "n.duckdb").exists()


def test_a_rate_limiting_endpoint_is_retried_then_refused(proxy, tmp_path, chain):
    busy = {"left": 3}

    def limited(body):
        if busy["left"] > 0:
            busy["left"] -= 1
            return 429, {"jsonrpc": "2.0", "id": None, "error": {"code": 429, "message": "Too Many Requests"}}
        return None

    env = {"ASKCHAIN_ETH_SYNC__BACKOFF_S": "0.05", "ASKCHAIN_ETH_SYNC__RETRIES": "4"}
    eased = proxy(limited)
    out = cli("sync", "--rpc", eased.url, "--from-block", "0", "--out", str(tmp_path / "ok.duckdb"), "--stats", env=env)
    assert out.returncode == 0, out.stderr
    assert query(tmp_path / "ok.duckdb", "SELECT count(*) FROM blocks") == [(chain.expected["blocks"],)]
    stuck = proxy(lambda body: None if isinstance(body, list) and body[0]["method"] == "eth_chainId" else (
        429, {"jsonrpc": "2.0", "id": None, "error": {"code": 429, "message": "Too Many Requests"}}))
    refused = cli("sync", "--rpc", stuck.url, "--from-block", "0", "--out", str(tmp_path / "no.duckdb"), env=env)
    one_line_refusal(refused, "HTTP 429", "after 4 retries", "--rate-limit")
    assert not (tmp_path / "no.duckdb").exists()


def test_the_call_tracer_gives_the_traces_trace_block_gives(chain, synced, tmp_path):
    """debug_traceBlockByNumber's call trees, flattened, are the rows trace_block's list gives."""
    path, _ = synced
    out = tmp_path / "debug.duckdb"
    report = run_sync(chain.url, out, traces="debug_traceBlockByNumber")
    assert report.notes == []
    same = ("SELECT transaction_hash, from_address, to_address, value, trace_type, call_type, trace_address, status, "
            "trace_id FROM traces ORDER BY ALL")
    assert query(out, same) == query(path, same)


def test_a_node_without_block_receipts_is_read_a_receipt_a_transaction(node_without, synced, tmp_path):
    """Without eth_getBlockReceipts, one eth_getTransactionReceipt a transaction gives the very same tables."""
    from askchain.domains.ethereum.tables import tables

    path, normal = synced
    out = tmp_path / "receipts.duckdb"
    report = run_sync(node_without("eth_getBlockReceipts").url, out)
    assert query(out, "SELECT value FROM askchain_sync.meta WHERE key = 'receipts'") == [("eth_getTransactionReceipt",)]
    assert report.calls == normal.calls - normal.blocks + normal.transactions  # a call a transaction, not a block
    for table in tables():
        every_row = f"SELECT * FROM {table} ORDER BY ALL"
        assert query(out, every_row) == query(path, every_row), table
