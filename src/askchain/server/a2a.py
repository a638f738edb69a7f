"""The AgentBeats-style A2A `generate` task: SQL for a question over a schema given in the request.

With no database attached, the tables are created empty in a scratch SQLite or DuckDB file, so the usual
pipeline (schema introspection, safe execution as a check) runs unchanged; the SQL is the answer.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Annotated, Any, Iterator, Union

import duckdb
import sqlglot
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator
from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.api import ask
from askchain.db.base import Engine
from askchain.db.connect import open_database
from askchain.db.dialects import quoted
from askchain.inputs import utf8_data
from askchain.server.turn import Services

NAME = Field(min_length=1, max_length=200)
_SQLITE_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]{0,40}(\(\s*\d+\s*(,\s*\d+\s*)?\))?$")
#: Dialect names clients use -> sqlglot's.
_ALIASES = {"postgresql": "postgres", "sqlserver": "tsql", "mssql": "tsql", "googlesql": "bigquery"}


class A2AColumn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = NAME
    type: str | None = Field(None, max_length=100)


class A2ATable(BaseModel):
    model_config = ConfigDict(extra="ignore")
    columns: list[Union[A2AColumn, str]] = Field(min_length=1, max_length=1000)

    @field_validator("columns")
    @classmethod
    def _names(cls, columns):
        """Columns come as names or {name, type} objects; keep one shape."""
        parsed = [c if isinstance(c, A2AColumn) else A2AColumn(name=c) for c in columns]
        if any(not c.name.strip() or len(c.name) > 200 for c in parsed):
            raise ValueError("column names must be 1-200 characters")
        return parsed


def _dialect_name(name: str | None) -> str | None:
    """A dialect as sqlglot names it; ValueError (so 422) for one it does not know."""
    if name is None or not name.strip():
        return None
    name = _ALIASES.get(name.strip().lower(), name.strip().lower())
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        raise ValueError(f"unknown SQL dialect '{name}'") from None
    return name


class A2ASchema(BaseModel):
    model_config = ConfigDict(extra="ignore")
    dialect: str | None = Field(None, max_length=40)
    database: str | None = Field(None, max_length=200)
    tables: dict[str, A2ATable] = Field(min_length=1, max_length=500)

    _dialect = field_validator("dialect")(_dialect_name)


class A2ARequest(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    task_id: Union[Annotated[str, StringConstraints(max_length=200)], int, None] = None
    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
    db_schema: A2ASchema = Field(alias="schema")
    dialect: str | None = Field(None, max_length=40)

    _dialect = field_validator("dialect")(_dialect_name)

    @model_validator(mode="before")
    @classmethod
    def _utf8(cls, data: Any) -> Any:
        return utf8_data(data)

    @property
    def query_dialect(self) -> str:
        """The SQL dialect asked for: the request's, else the schema's, else SQLite."""
        return self.dialect or self.db_schema.dialect or "sqlite"


class A2AResponse(BaseModel):
    sql: str
    reasoning: str
    task_id: str | int | None = None
    error: str | None = None


def generate(services: Services, request: A2ARequest, method: str) -> A2AResponse:
    """Write SQL for the request; runs in a worker thread. A database named by the schema is used if attached."""
    dialect = request.query_dialect
    model = services.models.get(None)
    attached = request.db_schema.database if request.db_schema.database in services.catalog else None
    with _engine_for(services, request, dialect, attached) as engine:
        # the caller takes one query that stands alone, not a plan's last step with earlier results written in
        one_query = services.settings.with_overrides(pipeline={"planner": "never"})
        result = ask(request.question, engine, method=method, model=model, settings=one_query, answer=False)
    where = f"database '{attached}'" if attached else f"an empty {engine.dialect} copy of the {len(request.db_schema.tables)} given tables"
    check = f"it failed there: {result.error}" if result.error else "it ran there without error"
    reasoning = f"{method} SQL generation with {model.model_id} in {dialect}; checked by running it on {where}: {check}."
    if result.abstained:  # the data cannot answer the question: no SQL, and the reasoning says what is missing
        reasoning = f"{method} SQL generation with {model.model_id} wrote no SQL: {result.answer}"
    return A2AResponse(sql=result.sql or "", reasoning=reasoning, task_id=request.task_id, error=result.error)


@contextmanager
def _engine_for(services: Services, request: A2ARequest, dialect: str, attached: str | None) -> Iterator[Engine]:
    if attached:
        yield services.catalog.engine(attached)
        return
    with tempfile.TemporaryDirectory(prefix="askchain-a2a-") as tmp:
        engine = empty_engine(request.db_schema, dialect, Path(tmp), services.settings.db)
        try:
            yield engine
        finally:
            engine.close()


def empty_engine(schema: A2ASchema, dialect: str, directory: Path, limits) -> Engine:
    """Create the tables, empty, in a scratch file: SQLite for SQLite questions, DuckDB (transpiling) otherwise."""
    engine_dialect = "sqlite" if dialect == "sqlite" else "duckdb"
    table_map: dict[str, str] = {}
    used: set[str] = set()
    path = directory / f"schema.{engine_dialect}"
    connect = sqlite3.connect if engine_dialect == "sqlite" else duckdb.connect
    with closing(connect(str(path))) as conn:
        for qualified, table in schema.tables.items():
            local = _local_name(qualified, used)
            if local.lower() != qualified.lower():
                table_map[qualified.lower()] = local
            columns = _unique(table.columns)
            typed = ", ".join(f"{quoted(c.name, engine_dialect)} {_column_type(c.type, dialect, engine_dialect)}" for c in columns)
            try:
                conn.execute(f"CREATE TABLE {quoted(local, engine_dialect)} ({typed})")
            except (sqlite3.Error, duckdb.Error):  # a declared type the engine rejects: keep the table, as text
                conn.execute(f"CREATE TABLE {quoted(local, engine_dialect)} ({', '.join(quoted(c.name, engine_dialect) + ' VARCHAR' for c in columns)})")
        conn.commit()
    return open_database(str(path), limits, query_dialect=dialect, table_map=table_map)


def _local_name(qualified: str, used: set[str]) -> str:
    base = re.sub(r"\W+", "_", qualified.strip("`\"[]").rsplit(".", 1)[-1]).strip("_") or "t"
    name, n = base, 1
    while name.lower() in used:
        n += 1
        name = f"{base}_{n}"
    used.add(name.lower())
    return name


def _unique(columns: list[A2AColumn]) -> list[A2AColumn]:
    seen, kept = set(), []
    for column in columns:
        if column.name.lower() not in seen:
            seen.add(column.name.lower())
            kept.append(column)
    return kept


def _column_type(declared: str | None, dialect: str, engine_dialect: str) -> str:
    """The declared type in the scratch engine's terms; unknown or odd types become text."""
    if not declared:
        return "TEXT" if engine_dialect == "sqlite" else "VARCHAR"
    if engine_dialect == "sqlite":
        return declared if _SQLITE_TYPE.match(declared.strip()) else "TEXT"
    try:
        built = exp.DataType.build(declared, dialect=dialect)
        return built.sql(dialect="duckdb") if built.this != exp.DataType.Type.USERDEFINED else "VARCHAR"
    except (SqlglotError, ValueError):
        return "VARCHAR"


