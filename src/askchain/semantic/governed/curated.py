"""Curated views for free SQL, derived from the semantic model: a model's table with some of its dimensions as
columns, the way Flipside's `ez_` tables and Dune's spellbook serve analysts' SQL. A query the model writes by hand
then reads a fee in ETH, a transfer's amount in whole tokens or a block's base fee beside its transactions as the
governed model computes them, instead of converting and joining again.

No engine has these views: where a query reads one, askchain inlines its definition as a CTE
(askchain.rules.repairs.curated_views), reduced to the columns the query names, so the SQL the user sees runs as
shown on BigQuery and on every local copy."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Collection

import ibis
from boring_semantic_layer.safe_eval import safe_eval

from askchain.errors import ConfigError
from askchain.semantic.governed.reading import ModelSpec
from askchain.semantic.governed.sql import readable_sql


@dataclass(frozen=True)
class CuratedView:
    """One curated view: the table a model reads (`base`, a dataset table or a view of the model file) with the
    listed dimensions of that model added as columns of the same names."""

    name: str
    #: The dataset table whose rows it has, one each (a view of the model file widens it by one-to-one joins).
    base: str
    #: Each column borrowed from another table, with where from ("block_base_fee_per_gas", "blocks.base_fee_per_gas").
    borrowed: tuple[tuple[str, str], ...]
    #: Each added column with what it is (the dimension's description).
    added: tuple[tuple[str, str], ...]
    table: ibis.Table = field(repr=False, compare=False)
    sql_schema: dict = field(repr=False, compare=False)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.table.columns)

    def note(self) -> str:
        """One prompt line saying what the view holds beyond its base table's own columns."""
        borrowed = ", ".join(f"{name} ({source})" for name, source in self.borrowed)
        added = "; ".join(f"{name}: {description}" for name, description in self.added)
        extra = "; ".join(part for part in (borrowed, added) if part)
        return f"{self.name}: every column of {self.base}, and {extra}"

    def definition(self, used: Collection[str] | None = None) -> str:
        """The view's GoogleSQL with the columns of `used` it has: all where `used` is None (a query selecting `*`),
        its first where it has none (a query counting its rows joins nothing)."""
        if used is None:
            return _definition(self, self.columns)
        wanted = {name.lower() for name in used}
        return _definition(self, tuple(c for c in self.columns if c.lower() in wanted) or self.columns[:1])


@lru_cache(maxsize=256)
def _definition(view: CuratedView, columns: tuple[str, ...]) -> str:
    """Compiled once per view and set of columns: a question's six samples mostly read the same ones."""
    return readable_sql(ibis.to_sql(view.table.select(*columns), dialect="bigquery"), view.sql_schema)


def curated_views(config: dict, model_configs: dict, specs: dict[str, ModelSpec], views: dict,
                  tables: dict[str, ibis.Table], sql_schema: dict) -> dict[str, CuratedView]:
    """The views of a model file's `curated` section ({view: {model, columns: [dimension, ...]}}), each over the
    table its model reads (`tables` holds the dataset's tables and the file's `views`, whose specs `views` are) with
    those dimensions' expressions as columns."""
    built = {}
    for name, spec in (config or {}).items():
        model = spec.get("model")
        if model not in specs:
            raise ConfigError(f"curated view '{name}' names an unknown model '{model}'")
        base = model_configs[model].get("table", model)
        table, dataset_table = tables[base], views.get(base, {}).get("table", base)
        dimensions = specs[model].dimensions
        unknown = [c for c in spec.get("columns", []) if c not in dimensions or c in table.columns]
        if unknown:
            raise ConfigError(f"curated view '{name}': {', '.join(unknown)} is no dimension of '{model}' "
                              "or is already a column of its table")
        added = {column: safe_eval(dimensions[column].expr, context={"_": ibis._}).unwrap()
                 for column in spec.get("columns", [])}
        built[name] = CuratedView(
            name=name, base=dataset_table,
            borrowed=tuple((c, s) for c, s in specs[model].sources.items() if not s.startswith(f"{dataset_table}.")),
            added=tuple((column, dimensions[column].description) for column in added),
            table=table.select(*table.columns, **added), sql_schema=sql_schema,
        )
    return built

