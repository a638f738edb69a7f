"""The local Ethereum engine: a DuckDB copy queried with BigQuery GoogleSQL and shown with BigQuery's schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from askchain.db.duckdb import DuckDBEngine
from askchain.db.schema import Schema
from askchain.domains.ethereum import DOMAIN_ID
from askchain.domains.ethereum.freshness import read_freshness, utc_today
from askchain.domains.ethereum.tables import knowledge, prompt_examples, table_map, tables


def _numeric(node: exp.Expression) -> exp.Expression:
    """BigQuery NUMERIC is DECIMAL(38, 9); sqlglot leaves it bare, which DuckDB reads as DECIMAL(18, 3) (token amounts overflow)."""
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.DECIMAL and not node.expressions:
        return exp.DataType.build("DECIMAL(38, 9)", dialect="duckdb")
    return node


def _extract(node: exp.Expression) -> exp.Expression:
    """EXTRACT parts whose numbering differs: BigQuery DAYOFWEEK is 1 (Sunday)..7, WEEK counts Sunday-started weeks (0-53)."""
    if not isinstance(node, exp.Extract):
        return node
    part = node.this
    name = part.name.upper() if isinstance(part, exp.Var) else ""
    if name == "DAYOFWEEK":
        return exp.Paren(this=exp.Add(this=node.copy(), expression=exp.Literal.number(1)))
    week_day = part.this.name.upper() if isinstance(part, exp.WeekStart) else ("SUNDAY" if name == "WEEK" else "")
    if week_day in ("SUNDAY", "MONDAY"):
        fmt = "%U" if week_day == "SUNDAY" else "%W"
        ts = exp.cast(node.expression.copy(), exp.DataType.build("TIMESTAMP"))
        return exp.cast(exp.Anonymous(this="STRFTIME", expressions=[ts, exp.Literal.string(fmt)]), exp.DataType.build("BIGINT"))
    return node


def _utc_now(node: exp.Expression) -> exp.Expression:
    """BigQuery's CURRENT_DATE()/CURRENT_TIMESTAMP() are UTC; DuckDB's follow the machine's time zone."""
    utc = exp.Anonymous(this="TIMEZONE", expressions=[exp.Literal.string("UTC"), exp.Anonymous(this="NOW")])
    if isinstance(node, exp.CurrentDate):
        return exp.cast(utc, exp.DataType.build("DATE"))
    if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDatetime)):
        return utc
    return node


def _as_of(day: date) -> Callable[[exp.Expression], exp.Expression]:
    """CURRENT_DATE() as `day` and the current time as its 00:00, for data that ends before today
    (askchain.domains.ethereum.freshness)."""
    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.CurrentDate):
            return exp.cast(exp.Literal.string(day.isoformat()), exp.DataType.build("DATE"))
        if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDatetime)):
            return exp.cast(exp.Literal.string(f"{day} 00:00:00"), exp.DataType.build("TIMESTAMP"))
        return node
    return fix


def _reads_table(name: str, sqls: Iterable[str | None], dialect: str) -> bool:
    """Whether one of `sqls` reads table `name`, short or qualified (a CTE of that name is not it)."""
    for sql in filter(None, sqls):
        try:
            tree = parse_one(sql, dialect)
        except SqlglotError:  # an answer's failed SQL read nothing
            continue
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        if name not in ctes and any(table.name.lower() == name for table in tree.find_all(exp.Table)):
            return True
    return False


#: GoogleSQL constructs sqlglot transpiles with different results on DuckDB, each fixed on the parsed tree.
GOOGLESQL_FIXES: tuple[Callable[[exp.Expression], exp.Expression], ...] = (_numeric, _extract, _utc_now)


@dataclass
class EthereumEngine(DuckDBEngine):
    """DuckDB mirror of `bigquery-public-data.crypto_ethereum`; queries are GoogleSQL with BigQuery table names."""

    query_dialect: str = "bigquery"
    table_map: dict[str, str] = field(default_factory=table_map)
    notes: str = field(default_factory=knowledge)
    domain_id: str = DOMAIN_ID

    def __post_init__(self):
        super().__post_init__()
        self._freshness = read_freshness(self._cursor(), self.path)

    def freshness(self, sqls: Iterable[str | None] = ()) -> str | None:
        """The data's freshness line, and where `sqls` read the balances table, what a sync's balances cover."""
        if not self._freshness:
            return None
        return self._freshness.text(utc_today(), balances=_reads_table("balances", sqls, self.query_dialect))

    def _introspect(self) -> Schema:
        """DuckDB's view, with BigQuery's types and descriptions so prompts show GoogleSQL types, named by the domain
        (whatever the file is called) so the domain's examples are found for it. The domain's tables show no row
        counts: the copy is rebuilt each UTC day, and a prompt that changed with it would evaluate its ~4k-token
        schema again in every day's first question instead of restoring it."""
        schema = super()._introspect()
        specs = tables()
        for table in schema.tables:
            spec = specs.get(table.name)
            if spec is None:
                continue
            table.description = spec.description
            table.row_count = None
            by_name = {c.name: c for c in spec.columns}
            for column in table.columns:
                col_spec = by_name.get(column.name)
                if col_spec:
                    column.type = col_spec.type
                    column.description = col_spec.description or column.description
        schema.tables.sort(key=lambda t: list(specs).index(t.name) if t.name in specs else len(specs))
        return schema

    def _examples(self, cur, table: str, column: str, data_type: str) -> list:
        """The domain's columns show its fixed example values (prompt_examples.json), the same for every day's
        rebuild, so the prompt and its saved KV state stay; other columns (a loaded export's extras) are sampled."""
        spec = tables().get(table)
        if spec and column in spec.column_names():
            return prompt_examples().get(table, {}).get(column, [])
        return super()._examples(cur, table, column, data_type)

    def translate(self, tree: exp.Expression) -> str:
        tree = tree.copy()
        today = utc_today()
        day = self._freshness.reference_day(today) if self._freshness else today
        fixes = ((_as_of(day),) if day < today else ()) + GOOGLESQL_FIXES
        for fix in fixes:
            tree = tree.transform(fix)
        return super().translate(tree)
