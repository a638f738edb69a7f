"""The crypto_ethereum tables as data (schema.json) and their DuckDB mirror: one source for builder, loader and engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlglot import exp

from askchain.db.dialects import quoted

HERE = Path(__file__).parent
DATASET = "bigquery-public-data.crypto_ethereum"

# Where the DuckDB copy stores a GoogleSQL type otherwise than sqlglot transpiles it: NUMERIC is DECIMAL(38, 9) in
# BigQuery (a bare DECIMAL is DECIMAL(18, 3) in DuckDB), and TIMESTAMP values are UTC, stored naive.
_STORED_AS = {exp.DataType.Type.DECIMAL: "DECIMAL(38, 9)", exp.DataType.Type.TIMESTAMPTZ: "TIMESTAMP"}


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
def prompt_examples() -> dict[str, dict[str, list]]:
    """Example values per table and column for the schema prompt, fixed as data (prompt_examples.json): sampled from
    the local copy they would change with each day's rebuild, and so would the prompt and its saved KV state."""
    return json.loads((HERE / "prompt_examples.json").read_text())["tables"]


@lru_cache(maxsize=1)
def knowledge() -> str:
    return (HERE / "knowledge.md").read_text().strip()


def duckdb_type(bq_type: str) -> str:
    """Translate a GoogleSQL type (scalars, ARRAY<...>, STRUCT<name type, ...>) to DuckDB, read by sqlglot."""

    def stored(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.DataType) and node.this in _STORED_AS and not node.expressions:
            return exp.DataType.build(_STORED_AS[node.this], dialect="duckdb")
        return node

    return exp.DataType.build(bq_type, dialect="bigquery").transform(stored).sql(dialect="duckdb")


def create_statements(name: str, *, if_not_exists: bool = False) -> list[str]:
    """CREATE TABLE plus COMMENT ON statements, so DuckDB introspection sees the BigQuery descriptions."""
    spec = tables()[name]
    cols = ", ".join(f"{quoted(c.name, 'duckdb')} {c.duckdb_type}" for c in spec.columns)
    head = "CREATE TABLE IF NOT EXISTS" if if_not_exists else "CREATE TABLE"
    return [f"{head} {name} ({cols})", *comment_statements(name)]


def comment_statements(name: str) -> list[str]:
    spec = tables()[name]
    stmts = [f"COMMENT ON TABLE {name} IS {exp.Literal.string(spec.description).sql('duckdb')}"]
    stmts += [f"COMMENT ON COLUMN {name}.{quoted(c.name, 'duckdb')} IS {exp.Literal.string(c.description).sql('duckdb')}"
              for c in spec.columns if c.description]
    return stmts


def table_map() -> dict[str, str]:
    """Names queries use -> local table names (fully qualified and dataset-qualified)."""
    mapping = {}
    for name in tables():
        mapping[f"{DATASET}.{name}"] = name
        mapping[f"crypto_ethereum.{name}"] = name
    return mapping
