"""The synced DuckDB file: the crypto_ethereum tables plus a small record of the sync (schema askchain_sync, which
the engine's introspection of the main schema never shows). Every batch of blocks is written in one transaction, so a
crash or a kill leaves the file at the last whole batch; a reorganization removes the replaced blocks' rows in one."""

from __future__ import annotations

import json
import tempfile
from enum import Enum
from pathlib import Path
from typing import Iterable

import duckdb

from askchain.domains.ethereum.sync.derive import Row
from askchain.domains.ethereum.tables import create_statements, tables
from askchain.errors import DatasetError

META = "askchain_sync.meta"
#: tables whose rows belong to a block (removed with it on a reorganization)
BLOCK_TABLES = ("transactions", "logs", "token_transfers", "traces", "contracts", "tokens")


class Target(Enum):
    NEW = "new"            # no file yet
    SYNCED = "synced"      # written by askchain eth sync: continue it
    SIMULATED = "simulated"  # the simulated dataset (askchain eth build): replaced
    OTHER = "other"        # anything else: refused


def classify(path: Path, simulated: bool) -> Target:
    """What `path` holds, read without changing it; `simulated`: a build record of the simulator lies beside it."""
    if not path.exists():
        return Target.NEW
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            schemas = {r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas()").fetchall()}
    except duckdb.Error as exc:
        raise DatasetError(f"{path} is not a DuckDB file askchain can write: {str(exc).splitlines()[0]}") from None
    if "askchain_sync" in schemas:
        return Target.SYNCED
    return Target.SIMULATED if simulated else Target.OTHER


class Store:
    """A write connection to the synced file; `write` and `remove_after` are each one transaction."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(path))
        self.con.execute("SET enable_progress_bar = false")
        self.con.execute("CREATE SCHEMA IF NOT EXISTS askchain_sync")
        self.con.execute(f"CREATE TABLE IF NOT EXISTS {META} (key VARCHAR PRIMARY KEY, value VARCHAR)")
        for name in tables():
            for statement in create_statements(name, if_not_exists=True):
                self.con.execute(statement)

    def close(self) -> None:
        self.con.close()

    def meta(self) -> dict[str, str]:
        return dict(self.con.execute(f"SELECT key, value FROM {META}").fetchall())

    def head(self) -> tuple[int, str] | None:
        """The newest stored block: (number, hash), None when there is none."""
        return self.con.execute("SELECT number, hash FROM blocks ORDER BY number DESC LIMIT 1").fetchone()

    def hashes(self, low: int, high: int) -> dict[int, str]:
        return dict(self.con.execute("SELECT number, hash FROM blocks WHERE number BETWEEN ? AND ?", [low, high]).fetchall())

    def known(self, table: str, addresses: Iterable[str]) -> set[str]:
        """Which of `addresses` the contracts or tokens table already holds."""
        wanted = sorted(set(addresses))
        if not wanted:
            return set()
        return {r[0] for r in self.con.execute(f"SELECT address FROM {table} WHERE list_contains(?, address)", [wanted]).fetchall()}

    def write(self, rows: dict[str, list[Row]], meta: dict[str, str]) -> None:
        """All rows of a batch and the sync record in one transaction; balances replace the addresses' old rows."""
        with tempfile.TemporaryDirectory(prefix="askchain-sync-") as staging:
            self.con.begin()
            try:
                balances = [row["address"] for row in rows.get("balances", [])]
                if balances:
                    self.con.execute("DELETE FROM balances WHERE list_contains(?, address)", [balances])
                for table, table_rows in rows.items():
                    self._insert(table, table_rows, Path(staging) / f"{table}.jsonl")
                self._set_meta(meta)
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise

    def _insert(self, table: str, rows: list[Row], staging: Path) -> None:
        """Rows through a JSON-lines file DuckDB reads in one scan: ~100x faster than row-by-row inserts."""
        if not rows:
            return
        spec = tables()[table]
        with open(staging, "w") as f:
            for row in rows:
                f.write(json.dumps(row))
                f.write("\n")
        columns = "{" + ", ".join(f"'{c.name}': '{c.duckdb_type}'" for c in spec.columns) + "}"
        names = ", ".join(f'"{c.name}"' for c in spec.columns)
        self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, format = 'newline_delimited', "
                         f"columns = {columns})", [str(staging)])

    def _set_meta(self, meta: dict[str, str]) -> None:
        for key, value in meta.items():
            self.con.execute(f"INSERT OR REPLACE INTO {META} VALUES (?, ?)", [key, value])

    def remove_after(self, number: int) -> set[str]:
        """Remove every block after `number` with its rows, in one transaction; returns the addresses those blocks
        touched, whose stored balances are then to be read again."""
        self.con.begin()
        try:
            touched = {r[0] for r in self.con.execute("""
                SELECT from_address FROM transactions WHERE block_number > $n
                UNION SELECT to_address FROM transactions WHERE block_number > $n AND to_address IS NOT NULL
                UNION SELECT miner FROM blocks WHERE number > $n
                UNION SELECT to_address FROM traces WHERE block_number > $n AND to_address IS NOT NULL""",
                {"n": number}).fetchall()}
            for table in BLOCK_TABLES:
                self.con.execute(f"DELETE FROM {table} WHERE block_number > ?", [number])
            self.con.execute("DELETE FROM blocks WHERE number > ?", [number])
            self.con.commit()
        except BaseException:
            self.con.rollback()
            raise
        return touched

    def counts(self) -> dict[str, int]:
        return {name: self.con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in tables()}
