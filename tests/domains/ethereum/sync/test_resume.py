"""A synced file grows incrementally, survives a kill, and follows a reorganization: a second run writes only the new
blocks; blocks the node replaced are found by their hashes and synced again; a run killed mid-sync leaves whole
batches only, and the next run completes it to exactly what one uninterrupted sync writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from askchain.config import get_settings
from askchain.domains.ethereum.sync.run import SyncRequest, sync

TABLES = ("blocks", "transactions", "logs", "token_transfers", "traces", "contracts", "tokens", "balances")


def run_sync(url: str, out, **options):
    return sync(SyncRequest(url, out, from_block=0, progress=False, **options), get_settings().eth_sync)


def query(path, sql: str):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def transfers(node, n: int) -> None:
    a = node.accounts
    for i in range(n):
        node.w3.eth.send_transaction({"from": a[i % 3], "to": a[3 + i % 4], "value": 10**15 * (i + 1)})


def node_chain(node) -> tuple[list[str], int]:
    """The node's block hashes from genesis and its transaction count."""
    head = node.w3.eth.block_number
    blocks = [node.w3.eth.get_block(n) for n in range(head + 1)]
    return [b.hash.to_0x_hex() for b in blocks], sum(len(b.transactions) for b in blocks)


def assert_matches_node(node, path) -> None:
    hashes, transactions = node_chain(node)
    assert [r[0] for r in query(path, "SELECT hash FROM blocks ORDER BY number")] == hashes
    assert query(path, "SELECT count(*), count(DISTINCT hash) FROM transactions") == [(transactions, transactions)]


@pytest.fixture(scope="module")
def node(anvil_node):
    transfers(anvil_node, 5)
    return anvil_node


def test_a_second_run_writes_only_the_new_blocks(node, tmp_path):
    out = tmp_path / "grow.duckdb"
    first = run_sync(node.url, out)
    assert (first.first, first.last) == (0, 5)
    transfers(node, 2)
    second = run_sync(node.url, out)
    assert (second.first, second.last, second.blocks, second.transactions) == (6, 7, 2, 2)
    third = run_sync(node.url, out)
    assert third.first is None and third.blocks == 0
    assert_matches_node(node, out)


def test_a_reorganization_is_repaired_by_the_next_sync(node, tmp_path):
    out = tmp_path / "reorg.duckdb"
    transfers(node, 3)
    run_sync(node.url, out, balances=True)
    before = query(out, "SELECT count(*) FROM transactions")[0][0]
    replaced = node.w3.eth.block_number - 1
    node.w3.provider.make_request("anvil_reorg", [2, []])  # the last two blocks replaced by empty ones
    report = run_sync(node.url, out, balances=True)
    assert report.reorgs == 1 and any(f"blocks {replaced} to" in note for note in report.notes)
    assert_matches_node(node, out)
    assert query(out, "SELECT count(*) FROM transactions")[0][0] == before - 2
    # balances of the accounts the replaced blocks had touched are the node's again
    stored = dict(query(out, "SELECT address, eth_balance FROM balances"))
    for account in node.accounts[:7]:
        assert stored[account.lower()] == node.w3.eth.get_balance(account)


def test_a_killed_sync_resumes_with_nothing_lost_or_twice(node, tmp_path):
    transfers(node, 60)
    node.w3.provider.make_request("anvil_mine", [300])
    env = {**os.environ, "ASKCHAIN_ETH_SYNC__BLOCKS_PER_BATCH": "10"}
    out = tmp_path / "killed.duckdb"
    sync_cli = [sys.executable, "-m", "askchain.cli", "eth", "sync", "--rpc", node.url, "--from-block", "0",
                "--out", str(out)]
    running = subprocess.Popen([*sync_cli, "--rate-limit", "120"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    time.sleep(4)
    assert running.poll() is None, "the sync ended before it could be killed"
    running.send_signal(signal.SIGKILL)
    running.wait()
    head = node.w3.eth.block_number
    kept = query(out, "SELECT count(*), max(number) FROM blocks")[0]
    assert 0 < kept[0] < head + 1 and kept[1] == kept[0] - 1  # whole batches from genesis, none beyond
    assert kept[0] % 10 == 0
    # every kept block has all its transactions, and nothing of a later block was written
    assert query(out, "SELECT count(*) FROM blocks b WHERE transaction_count <> "
                      "(SELECT count(*) FROM transactions t WHERE t.block_number = b.number)") == [(0,)]
    assert query(out, f"SELECT count(*) FROM transactions WHERE block_number > {kept[1]}") == [(0,)]
    resumed = subprocess.run(sync_cli, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"blocks {kept[0]:,} to" in resumed.stdout
    whole = tmp_path / "whole.duckdb"
    run_sync(node.url, whole)
    for table in TABLES:
        every_row = f"SELECT * FROM {table} ORDER BY ALL"
        assert query(out, every_row) == query(whole, every_row), table
    assert_matches_node(node, out)
