"""A curated view the query reads is inlined as a CTE: prompts show a domain's curated views (a model's table with a
fee in ETH, a transfer's amount in whole tokens, a block's base fee beside its transactions:
askchain.semantic.governed.curated), no engine has them, so the query gets their definitions in front of its own
text, each reduced to the columns the query names. Every rule after this one, validation, execution and the user
then read a query over the dataset's own tables, which runs as shown on BigQuery and on every local copy.

Prompts list the views in the notes, and an example that reads one table reads its view instead (`write_curated`):
the 1.5B model writes the tables its examples read."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import Dialect, exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.semantic.governed.curated import CuratedView


def inline_curated_views(sql: str, dialect: str, views: tuple[CuratedView, ...], dataset: str = "",
                         tree: exp.Expression | None = None) -> Repaired:
    """`sql` with a CTE in front for each curated view it reads (by its bare name, or qualified by `dataset`) and
    defines no CTE of that name, and a note naming them; unchanged where it reads none or sqlglot cannot read it.
    `tree` is `sql` parsed, where the caller has it (read, never changed)."""
    bare = _as_bare_names(sql, views, dataset)
    tree = readable(bare, dialect, tree if bare == sql else None)
    if tree is None:
        return sql, []
    by_name = {view.name.lower(): view for view in views}
    defined = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    read = sorted({table.name.lower() for table in tree.find_all(exp.Table)
                   if not table.db and table.name.lower() in by_name.keys() - defined})
    if not read:
        return sql, []
    used = None if _reads_every_column(tree) else {column.name for column in tree.find_all(exp.Column)}
    definitions = ",\n".join(f"{name} AS (\n{_indented(by_name[name].definition(used))}\n)" for name in read)
    at = _after_with(bare, dialect)
    text = f"WITH {definitions}\n{bare.lstrip()}" if at is None else f"{bare[:at]} {definitions},{bare[at:]}"
    return text, [f"{', '.join(read)} written as {'their definitions' if len(read) > 1 else 'its definition'} "
                  "(a CTE in front of the query)"]


def write_curated(sql: str, views: tuple[CuratedView, ...], dataset: str, dialect: str) -> str:
    """An example's SQL reading one table of a curated view's base (and joining none) as reading that view; every
    other example as it is (a join could make a view's added column ambiguous)."""
    tree = readable(sql, dialect)
    tables = {table.name.lower() for table in tree.find_all(exp.Table)} if tree is not None else set()
    view = next((v for v in views if tables == {v.base}), None)
    if view is None or any(tree.find(kind) for kind in (exp.Join, exp.Subquery, exp.CTE)):
        return sql
    return _qualified(view.base, dataset).sub(view.name, sql)


def _as_bare_names(sql: str, views: tuple[CuratedView, ...], dataset: str) -> str:
    """A view written with the dataset's qualifiers (`bigquery-public-data.crypto_ethereum.ez_blocks`) written bare."""
    for view in views:
        if view.name in sql:
            sql = _qualified(view.name, dataset).sub(view.name, sql)
    return sql


def _qualified(name: str, dataset: str) -> re.Pattern:
    """`name` qualified by the dataset (or its last part), backquoted whole, by part or not at all."""
    parts = dataset.split(".")
    prefixes = ["`?" + r"`?\.`?".join(re.escape(p) for p in parts[i:]) + r"`?\." for i in range(len(parts))]
    return re.compile(rf"(?<![\w.`-])(?:{'|'.join(prefixes)})?`?{re.escape(name)}`?(?![\w`-])", re.IGNORECASE)


def _indented(sql: str) -> str:
    return "\n".join(f"  {line}" for line in sql.splitlines())


def _reads_every_column(tree: exp.Expression) -> bool:
    """Whether a `*` (or `t.*`) is selected anywhere: then a view keeps all its columns."""
    return any(isinstance(star.parent, (exp.Select, exp.Column)) for star in tree.find_all(exp.Star))


def _after_with(sql: str, dialect: str) -> int | None:
    """Where the query's own CTEs begin (after `WITH` and any `RECURSIVE`); None where it does not open with WITH."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return None
    if not tokens or tokens[0].token_type != TokenType.WITH:
        return None
    opening = tokens[1] if len(tokens) > 1 and tokens[1].text.upper() == "RECURSIVE" else tokens[0]
    return opening.end + 1


@dataclass(frozen=True)
class CuratedViews(Repair):
    """A domain's curated views, inlined where a query reads them (prompts show them; the domain instantiates it
    with its views and the dataset that qualifies its tables)."""

    id = "curated_views"
    order = 5
    shapes_prompts = True
    views: tuple[CuratedView, ...]
    dataset: str

    def applies(self, analysis: Analysis) -> bool:
        return bool(self.views)

    def repair(self, analysis: Analysis) -> Repaired:
        return inline_curated_views(analysis.sql, analysis.dialect, self.views, self.dataset,
                                    analysis.parsed_or_none())

    def notes(self) -> list[str]:
        """The prompt's lines on the views: one saying how to use them, one per view."""
        return ["- Curated views: query them like tables (askchain adds their definitions); they save joins and unit "
                "conversions:", *(f"  - {view.note()}" for view in self.views)]

    def written_over_views(self, sql: str, dialect: str) -> str:
        return write_curated(sql, self.views, self.dataset, dialect)
