"""The crypto_ethereum tables as data (schema.json) and their DuckDB mirror: one source for builder, loader and engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent
DATASET = "bigquery-public-data.crypto_ethereum"

# BigQuery scalar type -> the DuckDB type holding the same values (NUMERIC is DECIMAL(38, 9) in BigQuery).
_SCALARS = {
    "STRING": "VARCHAR",
    "INT64": "BIGINT",
    "NUMERIC": "DECIMAL(38, 9)",
    "TIMESTAMP": "TIMESTAMP",  # UTC, stored naive
    "BOOL": "BOOLEAN",
}


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: str  # GoogleSQL type, e.g. ARRAY<STRING>
    description: str
    required: bool = False

    @property
    def duckdb_type(self) -> str:
        return duckdb_type(self.type)


@dataclass(frozen=True)
class TableSpec:
    name: str
    description: str
    columns: tuple[ColumnSpec, ...]

    @property
    def qualified(self) -> str:
        return f"{DATASET}.{self.name}"

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


@lru_cache(maxsize=1)
def tables() -> dict[str, TableSpec]:
    """The eight tables in dependency order (blocks first), read from the packaged schema.json."""
    data = json.loads((HERE / "schema.json").read_text())
    return {
        name: TableSpec(name, spec["description"], tuple(ColumnSpec(**c) for c in spec["columns"]))
        for name, spec in data["tables"].items()
    }


@lru_cache(maxsize=1)
def knowledge() -> str:
    return (HERE / "knowledge.md").read_text().strip()


def duckdb_type(bq_type: str) -> str:
    """Translate a GoogleSQL type (scalars, ARRAY<...>, STRUCT<name type, ...>) to DuckDB."""
    bq_type = bq_type.strip()
    if bq_type.startswith("ARRAY<") and bq_type.endswith(">"):
        return duckdb_type(bq_type[6:-1]) + "[]"
    if bq_type.startswith("STRUCT<") and bq_type.endswith(">"):
        fields = [f.strip().split(" ", 1) for f in _split_fields(bq_type[7:-1])]
        return "STRUCT(" + ", ".join(f'"{n}" {duckdb_type(t)}' for n, t in fields) + ")"
    return _SCALARS[bq_type]


def _split_fields(body: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in body:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_statements(name: str, *, if_not_exists: bool = False) -> list[str]:
    """CREATE TABLE plus COMMENT ON statements, so DuckDB introspection sees the BigQuery descriptions."""
    spec = tables()[name]
    cols = ", ".join(f'"{c.name}" {c.duckdb_type}' for c in spec.columns)
    head = "CREATE TABLE IF NOT EXISTS" if if_not_exists else "CREATE TABLE"
    return [f"{head} {name} ({cols})", *comment_statements(name)]


def comment_statements(name: str) -> list[str]:
    spec = tables()[name]
    stmts = [f"COMMENT ON TABLE {name} IS {_literal(spec.description)}"]
    stmts += [f'COMMENT ON COLUMN {name}."{c.name}" IS {_literal(c.description)}' for c in spec.columns if c.description]
    return stmts


def table_map() -> dict[str, str]:
    """Names queries use -> local table names (fully qualified and dataset-qualified)."""
    mapping = {}
    for name in tables():
        mapping[f"{DATASET}.{name}"] = name
        mapping[f"crypto_ethereum.{name}"] = name
    return mapping
