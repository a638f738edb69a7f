"""`askchain eth sync`: a block range from a JSON-RPC node into the local DuckDB file, batch by batch.

Everything that can be refused is checked before the file is touched (the endpoint answers, the chain is the one
asked for and the one the file holds, the range exists, a named trace method is offered), so bad input leaves no
file behind. A file holding earlier blocks is continued from its newest block after checking that block's hash
against the node; a reorganization (found there or mid-run, by a parent hash that differs) removes the replaced
blocks and syncs them again."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from askchain.config import EthSyncSettings
from askchain.domains.ethereum.dataset import forget_build
from askchain.domains.ethereum.freshness import build_record
from askchain.domains.ethereum.sync import chain
from askchain.domains.ethereum.sync.derive import Derived, derive, quantity
from askchain.domains.ethereum.sync.fetch import Sources, fetch_blocks, probe_sources
from askchain.domains.ethereum.sync.progress import Progress
from askchain.domains.ethereum.sync.rpc import RpcClient
from askchain.domains.ethereum.sync.store import Store, Target, classify
from askchain.errors import DatasetError


@dataclass
class SyncRequest:
    rpc: str
    out: Path
    last_days: int | None = None
    from_block: int | None = None
    to_block: int | None = None
    chain_id: int | None = None
    rate_limit: int | None = None
    traces: str | None = None  # None: eth_sync.traces
    balances: bool | None = None  # None: eth_sync.balances
    progress: bool = True


@dataclass
class SyncReport:
    first: int | None  # first block written this run (None: nothing new)
    last: int | None
    blocks: int = 0
    transactions: int = 0
    reorgs: int = 0
    seconds: float = 0.0
    calls: int = 0
    requests: int = 0
    retried: int = 0
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def sync(request: SyncRequest, settings: EthSyncSettings) -> SyncReport:
    """Run one sync; returns what it wrote. A refusal raises DatasetError before the file changes."""
    if request.balances is not None:
        settings = settings.model_copy(update={"balances": request.balances})
    client = RpcClient(request.rpc, settings, request.rate_limit)
    try:
        return _sync(client, request, settings)
    finally:
        client.close()


def _sync(client: RpcClient, request: SyncRequest, settings: EthSyncSettings) -> SyncReport:
    started = time.perf_counter()
    chain_id = _chain_id(client, request.chain_id)
    target = classify(request.out, build_record(request.out) is not None)
    if target is Target.OTHER:
        raise DatasetError(f"{request.out} holds data askchain eth sync did not write; give another --out")
    node_head = quantity(client.call("eth_blockNumber", []))
    stored = _stored(request.out, target, chain_id, client.label)
    first, last = _range(client, request, node_head, stored)
    sources = probe_sources(client, min(first, last), request.traces or settings.traces)
    if target is Target.SIMULATED:
        request.out.unlink()
        forget_build(request.out)
    store = Store(request.out)
    report = SyncReport(None, None, notes=[sources.note] if sources.note else [])
    meta = {"chain_id": str(chain_id), "endpoint": client.label, "traces": sources.traces or "none",
            "receipts": sources.receipts}
    try:
        _run(client, store, sources, (first, last), settings, meta, request.progress, report)
        _record_last_full_day(client, store)
        report.counts = store.counts()
        empty = store.head() is None
    finally:
        store.close()
    if empty and target is not Target.SYNCED:  # nothing committed: no file left behind
        request.out.unlink(missing_ok=True)
        request.out.with_name(request.out.name + ".wal").unlink(missing_ok=True)
    report.seconds = time.perf_counter() - started
    report.calls, report.requests, report.retried = client.calls, client.requests, client.retried
    return report


def _chain_id(client: RpcClient, expected: int | None) -> int:
    chain_id = quantity(client.call("eth_chainId", [], first=True))
    if expected is not None and chain_id != expected:
        raise DatasetError(f"{client.label} serves chain {chain_id}, not chain {expected} (--chain-id)")
    return chain_id


def _stored(path: Path, target: Target, chain_id: int, label: str) -> int | None:
    """The newest block a synced file holds (None: none), after checking it holds the node's chain."""
    if target is not Target.SYNCED:
        return None
    store = Store(path)
    try:
        meta, head = store.meta(), store.head()
    finally:
        store.close()
    if meta.get("chain_id") and int(meta["chain_id"]) != chain_id:
        raise DatasetError(f"{path} holds chain {meta['chain_id']}, but {label} serves chain {chain_id}; "
                           "give another --out")
    return head[0] if head else None


def _range(client: RpcClient, request: SyncRequest, node_head: int, stored: int | None) -> tuple[int, int]:
    """The blocks to sync: from after the stored ones (or --from-block / --last-days in a new file) to --to-block
    or the node's newest; a range the node does not have is refused."""
    last = node_head if request.to_block is None else request.to_block
    if last > node_head:
        raise DatasetError(f"block {last} does not exist yet: the newest block of {client.label} is {node_head}")
    if stored is not None:
        if request.from_block is not None and request.from_block > stored + 1:
            raise DatasetError(f"{request.out} ends at block {stored}; --from-block {request.from_block} would leave a gap")
        return stored + 1, last
    if request.from_block is not None:
        first = request.from_block
    elif request.last_days is not None:
        first = _first_block_of_day(client, node_head, request.last_days)
    else:
        raise DatasetError("a new file needs --last-days D or --from-block N to say where the sync starts")
    if first > node_head:
        raise DatasetError(f"block {first} does not exist yet: the newest block of {client.label} is {node_head}")
    if first > last:
        raise DatasetError(f"--from-block {first} is after --to-block {last}")
    return first, last


def _first_block_of_day(client: RpcClient, head: int, days: int) -> int:
    """The first block at or after 00:00 UTC `days` days before today, by binary search on block timestamps, so
    --last-days 1 holds yesterday whole and today so far."""
    if days < 1:
        raise DatasetError("--last-days must be at least 1")
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    since = (today - timedelta(days=days)).timestamp()
    low, high = 0, head
    while low < high:
        middle = (low + high) // 2
        block = client.call("eth_getBlockByNumber", [hex(middle), False])
        if quantity(block["timestamp"]) < since:
            low = middle + 1
        else:
            high = middle
    return low


def _run(client, store: Store, sources: Sources, span: tuple[int, int], settings: EthSyncSettings,
         meta: dict[str, str], progress_bar: bool, report: SyncReport) -> None:
    """Batches over `span`; a batch whose first parent differs from the stored block is a reorganization: the stored
    blocks back to the common ancestor go, and the sync goes on from there."""
    first, last = span
    stale = _repair_reorg(client, store, settings, report) if store.head() else set()
    start = store.head()[0] + 1 if store.head() else first
    with Progress(last - start + 1, progress_bar) as progress:
        while start <= last:
            numbers = list(range(start, min(start + settings.blocks_per_batch, last + 1)))
            fetched = fetch_blocks(client, numbers, sources)
            parent = store.hashes(start - 1, start - 1).get(start - 1)
            if parent is not None and fetched[0].block["parentHash"] != parent or not _linked(fetched):
                stale |= _repair_reorg(client, store, settings, report)
                start = store.head()[0] + 1
                progress.restart(last - start + 1)
                continue
            _write(client, store, fetched, sources.traces, settings, stale, meta)
            stale = set()
            report.first = numbers[0] if report.first is None else min(report.first, numbers[0])
            report.last = numbers[-1]
            report.blocks += len(numbers)
            report.transactions += sum(len(f.block["transactions"]) for f in fetched)
            progress.advance(len(numbers))
            start = numbers[-1] + 1


def _record_last_full_day(client: RpcClient, store: Store) -> None:
    """The newest day the file holds whole: the day before the next block's, or before the newest block's day when
    the node has no next block yet (askchain.domains.ethereum.freshness reads it)."""
    head = store.head()
    if head is None:
        return
    after = client.call("eth_getBlockByNumber", [hex(head[0] + 1), False])
    newest = after or client.call("eth_getBlockByNumber", [hex(head[0]), False])
    day = datetime.fromtimestamp(quantity(newest["timestamp"]), timezone.utc).date() - timedelta(days=1)
    store.write({}, {"last_full_day": day.isoformat()})


def _linked(fetched) -> bool:
    return all(b.block["parentHash"] == a.block["hash"] for a, b in zip(fetched, fetched[1:]))


def _repair_reorg(client: RpcClient, store: Store, settings: EthSyncSettings, report: SyncReport) -> set[str]:
    """Find where the node's chain meets the stored one (within eth_sync.reorg_depth blocks of the stored head) and
    remove the stored blocks after it; returns the addresses whose balances those blocks had touched."""
    head = store.head()[0]
    low = max(head - settings.reorg_depth, 0)
    stored = store.hashes(low, head)
    answers = client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in range(head, low - 1, -1)])
    for number, block in zip(range(head, low - 1, -1), answers):
        if block is not None and stored.get(number) == block["hash"]:
            if number == head:
                return set()
            report.reorgs += 1
            report.notes.append(f"reorganization: blocks {number + 1} to {head} were replaced by the node's")
            return store.remove_after(number)
    raise DatasetError(f"{store.path} and {client.label} differ over all of the last {settings.reorg_depth} "
                       "stored blocks (another chain, or a deeper reorganization); sync into a new --out")


def _write(client: RpcClient, store: Store, fetched, trace_method: str | None, settings: EthSyncSettings,
           stale: set[str], meta: dict[str, str]) -> None:
    """One batch: its rows, the contracts and tokens it introduced, the balances it changed, then the record."""
    derived: Derived = derive(fetched, trace_method)
    newest = quantity(fetched[-1].block["number"])
    rows = dict(derived.rows)
    created = {a: at for a, at in derived.created.items() if a not in store.known("contracts", derived.created)}
    rows["contracts"] = chain.contract_rows(client, created)
    candidates = derived.token_addresses | {r["address"] for r in rows["contracts"] if r["is_erc20"] or r["is_erc721"]}
    rows["tokens"] = chain.token_rows(client, sorted(candidates - store.known("tokens", candidates)), newest, created)
    if settings.balances:
        rows["balances"] = chain.balance_rows(client, sorted(derived.active | stale), newest)
        meta = {**meta, "balances_block": str(newest)}
    store.write(rows, meta)
