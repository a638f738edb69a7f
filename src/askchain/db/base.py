"""The engine interface: introspection plus the safe executor, the same for every database."""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.config import DBSettings, get_settings
from askchain.db.dialects import parse_one, qualified_table
from askchain.db.guard import check_read_only
from askchain.db.schema import Schema
from askchain.errors import QueryFailed, QueryRefused


def take_rows(rows: Iterable[tuple], max_rows: int, memory_limit_mb: int) -> list[tuple]:
    """Up to `max_rows` + 1 rows (the extra one says the result was cut), refused once their values pass the memory
    limit: a remote database's rows are held in askchain's own process, which no worker shields (100 PostgreSQL rows
    of repeat('x', 10^7) took 1 GB)."""
    taken: list[tuple] = []
    size, budget = 0, memory_limit_mb * 2**20
    for row in rows:
        taken.append(row)
        size += sum(len(v) if isinstance(v, (str, bytes, bytearray)) else 16 for v in row)
        if size > budget:
            raise QueryFailed(f"query stopped at the {memory_limit_mb} MB memory limit: its first {len(taken)} rows "
                              "already reach it")
        if len(taken) > max_rows:
            break
    return taken


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    elapsed_s: float
    truncated: bool = False
    sql: str = ""  # the statement the engine ran (after transpilation)
    bytes_processed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data = {
            "columns": self.columns,
            "rows": [list(r) for r in self.rows],
            "elapsed_s": round(self.elapsed_s, 4),
            "truncated": self.truncated,
        }
        if self.bytes_processed is not None:
            data["bytes_processed"] = self.bytes_processed
        return data


@dataclass
class Engine(ABC):
    """A database askchain can read. Subclasses open read-only connections and run already-checked SQL."""

    location: str
    limits: DBSettings = field(default_factory=lambda: get_settings().db)
    #: The sqlglot dialect of the SQL askchain writes for this database (may differ from the engine's own).
    query_dialect: str = ""
    #: Qualified table names as written in queries -> local table names (e.g. BigQuery names on a local copy).
    table_map: dict[str, str] = field(default_factory=dict)
    #: Domain knowledge to carry into prompts with the schema.
    notes: str = ""
    #: The domain whose data is behind the engine: its id names the schema (so the domain's examples are found for
    #: it, whatever the file or dataset is called); empty: the database's own name.
    domain_id: str = ""

    dialect: str = ""  # the engine's own sqlglot dialect (class-level data)

    def __post_init__(self):
        self.query_dialect = self.query_dialect or self.dialect
        self._schema: Schema | None = None
        self._schema_lock = threading.Lock()
        #: Table -> its qualified name (BigQuery's `project.dataset.table`), for the SQL askchain hands back.
        self._qualified: dict[str, str] = {}

    # ---- introspection -------------------------------------------------------------------------
    def schema(self) -> Schema:
        """The schema as prompts show it: tables by their short names when `db.short_table_names` is on (they run as
        written here), else by the qualified names queries may use."""
        with self._schema_lock:
            if self._schema is None:
                self._schema = self._introspect()
                self._schema.notes = self.notes
                self._schema.name = self.domain_id or self._schema.name
                self._schema.dialect = self.query_dialect
                for table in self._schema.tables:
                    qualified = table.query_name or self._query_names().get(table.name)
                    if qualified:
                        self._qualified[table.name.lower()] = qualified
                    table.query_name = None if self.limits.short_table_names else qualified
            return self._schema

    @abstractmethod
    def _introspect(self) -> Schema: ...

    def _query_names(self) -> dict[str, str]:
        """Local table -> the longest name queries use for it (e.g. `project.dataset.table`)."""
        names: dict[str, str] = {}
        for qualified, local in self.table_map.items():
            if len(qualified) > len(names.get(local, "")):
                names[local] = qualified
        return names

    def prompt_sql(self, sql: str) -> str:
        """SQL written with qualified table names (the domain's examples), as prompts show tables: shortened when the
        schema shows short names, so examples and schema name tables one way."""
        self.schema()
        if not self.limits.short_table_names:
            return sql
        for qualified in sorted({*self._qualified.values(), *self.table_map}, key=len, reverse=True):
            short = self.table_map.get(qualified.lower()) or qualified.rsplit(".", 1)[-1]  # `orders_2` where two clash
            sql = re.sub(rf"`{re.escape(qualified)}`|(?<![\w.`-]){re.escape(qualified)}(?![\w`])", short, sql, flags=re.I)
        return sql

    def qualified_sql(self, sql: str | None) -> str | None:
        """The query with each short table name qualified as the database's own clients name it, so the SQL askchain
        returns runs there too (BigQuery's console). Only those names change, in place (sqlglot gives their spans);
        the rest stays as written, and SQL that does not parse is handed back as it is."""
        self.schema()
        if not sql or not self._qualified:
            return sql
        try:
            tree = parse_one(sql, self.query_dialect)
        except SqlglotError:
            return sql
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        spans = []
        for table in tree.find_all(exp.Table):
            qualified = self._qualified.get(table.name.lower())
            meta = table.this.meta if isinstance(table.this, exp.Identifier) else {}
            if qualified and not table.args.get("db") and table.name.lower() not in ctes and "start" in meta:
                spans.append((meta["start"], meta["end"] + 1, qualified_table(qualified, self.query_dialect)))
        for start, end, name in sorted(spans, reverse=True):
            sql = sql[:start] + name + sql[end:]
        return sql

    @abstractmethod
    def example_rows(self, table: str, limit: int = 3) -> list[tuple]: ...

    # ---- safe execution ------------------------------------------------------------------------
    def execute(self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> QueryResult:
        """Check, translate and run one read-only statement written in `query_dialect`. A row cap outside 1 to
        `db.max_rows_ceiling` is refused: the rows are held in memory, and a cap of -1 silently dropped rows."""
        ceiling = self.limits.max_rows_ceiling
        if max_rows is not None and not 1 <= max_rows <= ceiling:
            raise QueryRefused(f"the row cap must be between 1 and {ceiling} (db.max_rows_ceiling), got {max_rows}")
        tree = check_read_only(sql, self.query_dialect)
        # Same dialect and nothing to rename: run the text as written, so results match the user's SQL exactly.
        native = sql.strip().rstrip(";") if self.query_dialect == self.dialect and not self.table_map else self.translate(tree)
        started = time.perf_counter()
        columns, rows, truncated, scanned = self._run(
            native, max_rows=max_rows or self.limits.max_rows, timeout_s=timeout_s or self.limits.timeout_s
        )
        return QueryResult(columns, rows, time.perf_counter() - started, truncated, native, scanned)

    def translate(self, tree: exp.Expression) -> str:
        """Rewrite mapped table names and transpile to the engine's dialect."""
        if self.table_map:
            tree = tree.copy()
            for table in tree.find_all(exp.Table):
                qualified = ".".join(p.name for p in table.parts).lower()
                local = self.table_map.get(qualified)
                if local:
                    table.set("this", exp.to_identifier(local))
                    table.set("db", None)
                    table.set("catalog", None)
        try:
            return tree.sql(dialect=self.dialect, unsupported_level=sqlglot.ErrorLevel.RAISE)
        except SqlglotError as exc:
            raise QueryFailed(
                f"cannot translate this {self.query_dialect} SQL to {self.dialect}: {str(exc).splitlines()[0]}"
            ) from exc

    @abstractmethod
    def _run(self, sql: str, *, max_rows: int, timeout_s: float) -> tuple[list[str], list[tuple], bool, int | None]:
        """Run checked SQL on a read-only connection: (columns, rows, truncated, bytes processed)."""

    def close(self) -> None:  # noqa: B027 - optional for engines holding connections
        pass

    def freshness(self, sqls: Iterable[str | None] = ()) -> str | None:
        """How current the data is, said beside every answer where the data has a time line ("data through block
        N, <UTC time>"), with a line more where the answer's `sqls` read a table the data holds only in part; None
        where it has no time line."""
        return None

    @property
    def name(self) -> str:
        return self.location
