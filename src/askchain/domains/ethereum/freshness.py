"""How current the local Ethereum data is, for every answer: "data through block N, 2026-11-27 23:51 UTC".

Queries write relative windows against CURRENT_DATE() ("yesterday" is the day before it, "the last 7 days" the 7 full
days before it). The simulated copy ends at 00:00 UTC today, so today is right for it; synced data ends where the
sync stopped, which may be days ago. Where the data's last full UTC day is before yesterday, the engine reads
CURRENT_DATE() as the day after it, so "yesterday" is the data's last full day, and the freshness line says so.
Which day is the last full one is recorded where the data is made: the simulated copy's build record names the
snapshot's day, a sync records the day before the block after its last (or before its last block's day, when that
was the node's newest); other data (loaded exports) is taken to end in a partial day.

A synced range is not the chain's balance sheet: its balances are fetched only on request (eth_sync.balances), and
then only for the addresses its blocks touched. An answer whose SQL reads them says so on a line of its own under the
freshness line, so a figure from an empty or partial table is never taken for the chain's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

def utc_today() -> date:
    return datetime.now(timezone.utc).date()


def build_record_path(path: Path) -> Path:
    """The simulator's build record beside its database (end date, days, scale, seed, row counts), read by the
    rebuild check, by sync (which replaces a simulated file) and by benchmark provenance
    (askchain.eval.provenance.database_build), which finds it by this name."""
    return Path(path).with_suffix(".json")


def build_record(path: Path) -> dict | None:
    """The build record of the simulated dataset at `path`; None: not a simulated dataset."""
    record = build_record_path(path)
    return json.loads(record.read_text()) if record.is_file() else None


@dataclass(frozen=True)
class Freshness:
    first_block: int
    last_block: int
    last_time: datetime  # naive UTC, as the tables store it
    last_full_day: date
    synced: bool = False  # written by askchain eth sync
    balances_block: int | None = None  # a synced file's: the block its balances were read at (None: never fetched)

    def reference_day(self, today: date) -> date:
        """The day queries read as today: `today`, or the day after the data's last full day when that is earlier."""
        return min(today, self.last_full_day + timedelta(days=1))

    def text(self, today: date, balances: bool = False) -> str:
        """The freshness line; with `balances` (the answer read them), a second line on what a sync's balances cover."""
        line = f"data through block {self.last_block:,}, {self.last_time:%Y-%m-%d %H:%M} UTC"
        if self.reference_day(today) < today:
            day = self.last_full_day
            line += (f"; it ends before today, so relative dates are read against its last full day, {day}: "
                     f"'yesterday' is {day}, 'the last 7 days' end with it")
        note = self.balances_note() if balances else None
        return f"{line}\n{note}" if note else line

    def balances_note(self) -> str | None:
        """What a synced file's balances table holds (None: not synced, its balances are the data's own)."""
        if not self.synced:
            return None
        if self.balances_block is None:
            return ("balances were not fetched by this sync, so the balances table is empty "
                    "(askchain eth sync --balances fetches them)")
        line = (f"balances are the node's at block {self.balances_block:,}, for only the addresses the synced blocks "
                "touched: not every account on the chain")
        if self.balances_block < self.last_block:
            line += f"; blocks after {self.balances_block:,} were synced without balances"
        return line


def read_freshness(cursor, path: Path) -> Freshness | None:
    """The block range of the crypto_ethereum copy at `path` (None: no blocks table or no blocks); without a
    recorded last full day, the newest block's day is taken as partial."""
    has_blocks = cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'blocks' "
                                "AND schema_name = current_schema()").fetchone()[0]
    if not has_blocks:
        return None
    first, last, last_time = cursor.execute("SELECT min(number), max(number), max(timestamp) FROM blocks").fetchone()
    if last is None:
        return None
    meta = _sync_record(cursor)
    last_full_day = _recorded_last_full_day(meta, path) or last_time.date() - timedelta(days=1)
    balances_block = int(meta["balances_block"]) if meta and "balances_block" in meta else None
    return Freshness(first, last, last_time, last_full_day, meta is not None, balances_block)


def _sync_record(cursor) -> dict[str, str] | None:
    """What askchain eth sync recorded in the file (askchain.domains.ethereum.sync.store); None: not a synced file."""
    synced = cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'askchain_sync' "
                            "AND table_name = 'meta'").fetchone()[0]
    return dict(cursor.execute("SELECT key, value FROM askchain_sync.meta").fetchall()) if synced else None


def _recorded_last_full_day(meta: dict[str, str] | None, path: Path) -> date | None:
    """The last full day a sync recorded in the file, else the one the simulator's build record beside it implies."""
    if meta is not None:
        return date.fromisoformat(meta["last_full_day"]) if "last_full_day" in meta else None
    record = build_record(path)
    return date.fromisoformat(record["end"]) - timedelta(days=1) if record and "end" in record else None
