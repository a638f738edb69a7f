"""How current the local Ethereum data is, for every answer: "data through block N, 2026-11-27 23:51 UTC".

Queries write relative windows against CURRENT_DATE() ("yesterday" is the day before it, "the last 7 days" the 7 full
days before it). The simulated copy ends at 00:00 UTC today, so today is right for it; synced data ends where the
sync stopped, which may be days ago. Where the data's last full UTC day is before yesterday, the engine reads
CURRENT_DATE() as the day after it, so "yesterday" is the data's last full day, and the freshness line says so.
Which day is the last full one is recorded where the data is made: the simulated copy's build record names the
snapshot's day, a sync records the day before the block after its last (or before its last block's day, when that
was the node's newest); other data (loaded exports) is taken to end in a partial day."""

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

    def reference_day(self, today: date) -> date:
        """The day queries read as today: `today`, or the day after the data's last full day when that is earlier."""
        return min(today, self.last_full_day + timedelta(days=1))

    def text(self, today: date) -> str:
        line = f"data through block {self.last_block:,}, {self.last_time:%Y-%m-%d %H:%M} UTC"
        if self.reference_day(today) < today:
            day = self.last_full_day
            line += (f"; it ends before today, so relative dates are read against its last full day, {day}: "
                     f"'yesterday' is {day}, 'the last 7 days' end with it")
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
    return Freshness(first, last, last_time, _recorded_last_full_day(cursor, path) or last_time.date() - timedelta(days=1))


def _recorded_last_full_day(cursor, path: Path) -> date | None:
    """The last full day a sync recorded in the file, else the one the simulator's build record beside it implies."""
    synced = cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'askchain_sync' "
                            "AND table_name = 'meta'").fetchone()[0]
    if synced:
        row = cursor.execute("SELECT value FROM askchain_sync.meta WHERE key = 'last_full_day'").fetchone()
        return date.fromisoformat(row[0]) if row else None
    record = build_record(path)
    return date.fromisoformat(record["end"]) - timedelta(days=1) if record and "end" in record else None
