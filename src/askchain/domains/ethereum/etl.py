"""Load ethereum-etl exports (CSV or JSON lines) into the crypto_ethereum schema, creating or appending.

Files are recognised by name, as ethereum-etl writes them: blocks, transactions, receipts, logs, token_transfers,
traces, contracts, tokens (optionally `expected_` first or a block range after, e.g. blocks_00000000_00099999.csv).
Receipts fill the receipt_* columns of their transactions. Rows already loaded (same key) are merged, missing values
filled in, never duplicated; block_timestamp and block_hash are filled from blocks where an export left them out.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb

from askchain.db.dialects import quoted
from askchain.domains.ethereum.tables import create_statements, tables
from askchain.errors import DatasetError

_FILE = re.compile(r"^(?:expected_)?(blocks|transactions|receipts|logs|token_transfers|traces|contracts|tokens)(?:_\d+)*\.(csv|json|jsonl)$")

# Key columns per table: rows with the same key are the same entity.
KEYS = {
    "blocks": ("number",),
    "transactions": ("hash",),
    "logs": ("block_number", "log_index"),
    "token_transfers": ("block_number", "log_index"),
    "traces": ("block_number", "transaction_index", "trace_address", "trace_type", "trace_id"),
    "contracts": ("address",),
    "tokens": ("address",),
}
# ethereum-etl receipt fields -> transactions columns.
RECEIPT_COLUMNS = {
    "cumulative_gas_used": "receipt_cumulative_gas_used", "gas_used": "receipt_gas_used",
    "contract_address": "receipt_contract_address", "root": "receipt_root", "status": "receipt_status",
    "effective_gas_price": "receipt_effective_gas_price", "blob_gas_price": "receipt_blob_gas_price",
    "blob_gas_used": "receipt_blob_gas_used",
}
REQUIRED = {"blocks": ("number", "hash"), "transactions": ("hash", "block_number"), "receipts": ("transaction_hash",),
            "logs": ("log_index", "block_number"), "token_transfers": ("token_address", "log_index", "block_number"),
            "traces": ("block_number", "trace_type"), "contracts": ("address",), "tokens": ("address",)}


class _BadValue(ValueError):
    pass


def _int(v):
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        raise _BadValue(repr(v))
    if isinstance(v, int):
        return v
    try:
        return int(v, 16) if isinstance(v, str) and v.startswith("0x") else int(v)
    except (TypeError, ValueError):
        raise _BadValue(repr(v)) from None


def _timestamp(v):
    seconds = _int(v)
    return None if seconds is None else datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None)


def _text(v):
    if v is None or v == "":
        return None
    if not isinstance(v, (str, int)):
        raise _BadValue(repr(v))
    return str(v)


def _bool(v):
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    if str(v).lower() in ("true", "false"):
        return str(v).lower() == "true"
    raise _BadValue(repr(v))


def _string_list(v):
    if v is None or v == "":
        return [] if v == "" else None
    if isinstance(v, str):
        return v.split(",")
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    raise _BadValue(repr(v))


def _trace_address(v):
    if v is None or v == "" or v == []:
        return None
    if isinstance(v, list):
        return ",".join(str(_int(x)) for x in v)
    return _text(v)


def _withdrawals(v):
    if v is None or v == "" or v == []:
        return [] if v is not None else None
    items = json.loads("[" + v + "]") if isinstance(v, str) else v
    if not isinstance(items, list) or not all(isinstance(w, dict) for w in items):
        raise _BadValue(repr(v)[:60])
    return [{"index": _int(w.get("index")), "validator_index": _int(w.get("validator_index")),
             "address": _text(w.get("address")), "amount": _text(w.get("amount"))} for w in items]


# How each schema type is read from an export value; columns with special shapes are named.
_BY_TYPE: dict[str, Callable[[Any], Any]] = {"STRING": _text, "INT64": _int, "NUMERIC": _int, "TIMESTAMP": _timestamp,
                                              "BOOL": _bool, "ARRAY<STRING>": _string_list}
_BY_COLUMN: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("traces", "trace_address"): _trace_address,
    ("blocks", "withdrawals"): _withdrawals,
    ("token_transfers", "value"): _text,
    ("tokens", "decimals"): _text,
    ("tokens", "total_supply"): _text,
}


def _converter(table: str, column: str, bq_type: str):
    return _BY_COLUMN.get((table, column)) or _BY_TYPE.get(bq_type, _text)


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) pairs from a CSV or JSON-lines export; malformed lines raise DatasetError."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            if path.suffix == ".csv":
                reader = csv.DictReader(f)
                for record in reader:
                    if None in record or any(v is None for v in record.values()):
                        raise DatasetError(f"{path}:{reader.line_num}: expected {len(reader.fieldnames or [])} fields")
                    yield reader.line_num, record
            else:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
                    if not isinstance(record, dict):
                        raise DatasetError(f"{path}:{number}: expected a JSON object per line")
                    yield number, record
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as exc:
        raise DatasetError(f"{path}: malformed CSV ({exc})") from None


def _rows(path: Path, kind: str) -> list[tuple]:
    """Rows of the target table (or receipt updates) from one export file."""
    target = "transactions" if kind == "receipts" else kind
    spec = tables()[target]
    if kind == "receipts":
        columns = [("transaction_hash", "hash", _text)] + [
            (src, dst, _converter(target, dst, next(c.type for c in spec.columns if c.name == dst))) for src, dst in RECEIPT_COLUMNS.items()]
    else:
        columns = [(c.name, c.name, _converter(target, c.name, c.type)) for c in spec.columns]
    rows = []
    for line, record in _records(path):
        missing = [c for c in REQUIRED[kind] if record.get(c) in (None, "")]
        if missing:
            raise DatasetError(f"{path}:{line}: missing required field '{missing[0]}'")
        try:
            rows.append(tuple(convert(record.get(src)) for src, _, convert in columns))
        except _BadValue as exc:
            bad = next(src for src, _, convert in columns if _fails(convert, record.get(src)))
            raise DatasetError(f"{path}:{line}: bad value for '{bad}': {exc}") from None
    return rows


def _fails(convert, value) -> bool:
    try:
        convert(value)
    except _BadValue:
        return True
    return False


def export_files(directory: Path) -> list[tuple[Path, str]]:
    return sorted((p, m.group(1)) for p in directory.rglob("*") if p.is_file() and (m := _FILE.match(p.name)))


def load_etl(directory: str | Path, db_path: str | Path) -> dict[str, int]:
    """Load every ethereum-etl export under `directory` into the DuckDB file `db_path`; returns rows per table after loading."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DatasetError(f"{directory} is not a directory")
    files = export_files(directory)
    if not files:
        raise DatasetError(f"no ethereum-etl exports (blocks.csv, transactions.json, ...) under {directory}")
    parsed = {kind: [] for kind in (*tables(), "receipts")}
    for path, kind in files:
        parsed[kind].extend(_rows(path, kind))
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db_path))
    try:
        for name in tables():
            for stmt in create_statements(name, if_not_exists=True):
                con.execute(stmt)
        for name in KEYS:
            _merge(con, name, parsed[name])
        _apply_receipts(con, parsed["receipts"])
        _fill_block_fields(con)
        return {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in tables()}
    finally:
        con.close()


def _merge(con, table: str, rows: list[tuple]) -> None:
    """Insert new keys; for keys already present (or repeated in the input) keep known values and fill missing ones."""
    if not rows:
        return
    columns = tables()[table].column_names()
    keys = KEYS[table]
    con.execute(f"CREATE OR REPLACE TEMP TABLE stage AS SELECT * FROM {table} LIMIT 0")
    con.executemany(f"INSERT INTO stage VALUES ({', '.join('?' * len(columns))})", rows)
    q = {c: quoted(c, "duckdb") for c in columns}
    merged = ", ".join(q[c] if c in keys else f"any_value({q[c]}) AS {q[c]}" for c in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE stage AS SELECT {merged} FROM stage GROUP BY ALL")
    match = " AND ".join(f"t.{q[k]} IS NOT DISTINCT FROM s.{q[k]}" for k in keys)
    updates = ", ".join(f"{q[c]} = COALESCE(t.{q[c]}, s.{q[c]})" for c in columns if c not in keys)
    con.execute(f"UPDATE {table} t SET {updates} FROM stage s WHERE {match}")
    con.execute(f"INSERT INTO {table} ({', '.join(q.values())}) SELECT {', '.join('s.' + v for v in q.values())} "
                f"FROM stage s WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {match})")
    con.execute("DROP TABLE stage")


def _apply_receipts(con, rows: list[tuple]) -> None:
    if not rows:
        return
    names = ["hash", *RECEIPT_COLUMNS.values()]
    con.execute(f"CREATE OR REPLACE TEMP TABLE receipts AS SELECT {', '.join(names)} FROM transactions LIMIT 0")
    con.executemany(f"INSERT INTO receipts VALUES ({', '.join('?' * len(names))})", rows)
    sets = ", ".join(f"{c} = COALESCE(t.{c}, r.{c})" for c in RECEIPT_COLUMNS.values())
    con.execute(f"UPDATE transactions t SET {sets} FROM receipts r WHERE t.hash = r.hash")
    con.execute("DROP TABLE receipts")


def _fill_block_fields(con) -> None:
    """Exports written without block_timestamp/block_hash get them from the blocks table when it has the block."""
    for name, spec in tables().items():
        if name == "blocks" or "block_number" not in spec.column_names():
            continue
        con.execute(f"""UPDATE {name} t SET block_timestamp = COALESCE(t.block_timestamp, b.timestamp),
                        block_hash = COALESCE(t.block_hash, b.hash)
                        FROM blocks b WHERE b.number = t.block_number AND (t.block_timestamp IS NULL OR t.block_hash IS NULL)""")
