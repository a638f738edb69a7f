"""Ibis tables for a semantic model: the dataset's tables from its schema file, and the model's views over them.

The tables are unbound (no connection): a semantic query compiles to SQL without touching the data. Their names are
fully qualified (`project.dataset.table`, as the schema file's dataset names them) so the SQL reads the real tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import ibis
from ibis.backends.sql.datatypes import BigQueryType

from askchain.errors import ConfigError


def schema_tables(schema_file: Path, dataset: str) -> dict[str, ibis.Table]:
    """One unbound Ibis table per table of a schema file ({"tables": {name: {"columns": [{name, type}]}}}), its
    GoogleSQL types read by Ibis (NUMERIC as decimal(38, 9), TIMESTAMP as UTC, arrays and structs as nested types)."""
    catalog, _, database = dataset.rpartition(".")
    tables = json.loads(Path(schema_file).read_text())["tables"]
    return {
        name: ibis.table(
            {column["name"]: BigQueryType.from_string(column["type"]) for column in spec["columns"]},
            name=name, catalog=catalog or None, database=database,
        )
        for name, spec in tables.items()
    }


def build_views(views: dict, tables: dict[str, ibis.Table]) -> dict[str, ibis.Table]:
    """The views a model file declares, each a table widened by one-to-one LEFT JOINs or a table with one array
    unnested, so that a model over it has one row per row of its base table (or per array element)."""
    built = {}
    for name, spec in views.items():
        base = _table(tables, spec["table"], name)
        if "unnest" in spec:
            built[name] = _unnested(base, spec["unnest"], spec.get("keep", []))
        else:
            built[name] = _joined(base, spec.get("joins", []), tables, name)
    return built


def _table(tables: dict[str, ibis.Table], name: str, view: str) -> ibis.Table:
    if name not in tables:
        raise ConfigError(f"view '{view}' reads an unknown table '{name}' (tables: {', '.join(sorted(tables))})")
    return tables[name]


def _joined(base: ibis.Table, joins: list[dict], tables: dict[str, ibis.Table], view: str) -> ibis.Table:
    """The base table's columns, then each join's borrowed columns under their new names."""
    widened = base
    for join in joins:
        other = _table(tables, join["table"], view)
        condition = [widened[left] == other[right] for left, right in join["keys"].items()]
        borrowed = {new: other[old] for new, old in join["columns"].items()}
        widened = widened.left_join(other, condition).select(widened, **borrowed)
    return widened


def _unnested(base: ibis.Table, column: str, keep: list[str]) -> ibis.Table:
    """One row per element of an array of structs: the kept columns beside the struct's fields."""
    rows = base.select(*keep, column).unnest(column)
    element = rows[column]
    return rows.select(*keep, **{field: element[field] for field in element.type().names})


def column_sources(table: str, views: dict, tables: dict[str, ibis.Table]) -> dict[str, str]:
    """The dataset column (`table.column`) behind each column of a table or view a model reads: a view's base
    columns and the columns its joins borrow; an unnested array's fields have none."""
    view = views.get(table)
    base = view["table"] if view else table
    kept = view.get("keep") if view and "unnest" in view else None
    sources = {column: f"{base}.{column}" for column in tables[base].columns if kept is None or column in kept} \
        if base in tables else {}
    for join in (view or {}).get("joins", []):
        sources.update({new: f"{join['table']}.{old}" for new, old in join["columns"].items()})
    return sources
