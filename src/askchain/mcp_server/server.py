"""askchain's tools for MCP clients: ask a question, run read-only SQL, list databases, describe a schema, and query
a governed semantic model by its measures and dimensions.

`build_server(settings, catalog, model=...)` makes the server; `askchain mcp` runs it over stdio or streamable
HTTP, tests inject a scripted model. The databases are the HTTP server's catalog and every statement goes through
the same safe executor, so an assistant can do no more than a user of `askchain serve`. Refusals (unknown database,
a write statement, an empty question) come back as one-line tool errors.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated, Any, Iterator

from pydantic import Field
from pydantic_core import to_jsonable_python

from askchain import __version__
from askchain.api import ask as ask_question
from askchain.config import Settings
from askchain.errors import AskchainError, require
from askchain.inputs import utf8_text
from askchain.llm.base import ChatModel
from askchain.server.auth import BearerToken, LoopbackOnly
from askchain.semantic.governed.plans import SemanticPlan
from askchain.semantic.governed.query import SemanticQuery
from askchain.server.catalog import Catalog, UnknownDatabase, schema_json
from askchain.server.semantic import run_semantic_query
from askchain.server.semantic import semantic_catalog as semantic_catalog_of
from askchain.server.turn import ModelPool

require("mcp", "mcp")

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

#: Rows a tool hands back: the assistant reads every one, so `rows` stops here (`rows_returned`) while `row_count`
#: counts the whole result, up to the engine's row cap (`db.max_rows`; `truncated` when the result went past it).
TOOL_ROWS = 200

INSTRUCTIONS = (
    "askchain answers questions about SQL databases. Call list_databases to see them, describe_schema for a "
    "database's tables and columns, ask for a question in plain English (it writes, checks and runs the SQL), "
    "run_sql to run your own read-only SQL in the database's dialect, and, where a database has a governed semantic "
    "model, semantic_catalog and semantic_query to ask it by measures, dimensions and windows. Only read-only "
    "statements run."
)

Database = Annotated[str | None, Field(description="A name from list_databases (default: the default database).")]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def build_server(settings: Settings, catalog: Catalog, model: ChatModel | None = None) -> MCPServer:
    """The MCP server over `catalog`'s databases; questions use `model` (default: settings.llm.model, loaded once)."""
    models = ModelPool(settings, model)
    server = MCPServer("askchain", title="askchain", instructions=INSTRUCTIONS, version=__version__)

    @contextmanager
    def tool_errors() -> Iterator[None]:
        """askchain's refusals as the one-line tool errors the assistant reads (the SDK logs them, no traceback)."""
        try:
            yield
        except UnknownDatabase as exc:
            known = ", ".join(catalog.names()) or "none configured"
            raise ToolError(f"unknown database '{exc.args[0]}' (databases: {known})") from None
        except AskchainError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=READ_ONLY)
    def ask(
        question: Annotated[str, Field(description="The question, in plain English.")],
        db: Database = None,
        method: Annotated[str | None, Field(description="baseline, self-consistency or pipeline (default: settings).")] = None,
    ) -> dict[str, Any]:
        """Answer a question about a database: the SQL askchain wrote, its result rows and a short answer in words."""
        if not question.strip():  # refused before the model loads
            raise ToolError("the question is empty")
        with tool_errors():
            engine = catalog.engine(db)
            result = ask_question(question, engine, method=method, model=models.get(None), settings=settings)
        answered = result.public()
        answered.pop("chart", None)  # a Plotly figure for the web UI
        return {**answered, "db": db or catalog.default, **_rows(result.rows, result.truncated)}

    @server.tool(annotations=READ_ONLY)
    def run_sql(
        sql: Annotated[str, Field(description="One read-only statement (SELECT, WITH...) in the database's dialect.")],
        db: Database = None,
    ) -> dict[str, Any]:
        """Run one read-only SQL statement through askchain's safe executor; writes and file access are refused."""
        with tool_errors():
            engine = catalog.engine(db)
            result = engine.execute(utf8_text(sql, "the SQL"))
        return {**result.as_dict(), "db": db or catalog.default, "dialect": engine.query_dialect,
                **_rows(result.rows, result.truncated)}

    @server.tool(annotations=READ_ONLY)
    def semantic_catalog(db: Database = None) -> dict[str, Any]:
        """The database's governed semantic model: each model's measures (with units) and dimensions, and the named
        time windows. Query it with semantic_query instead of writing SQL; units, shares and windows are then right
        by construction. A database without a semantic model is refused."""
        with tool_errors():
            return semantic_catalog_of(catalog.engine(db))

    @server.tool(annotations=READ_ONLY)
    def semantic_query(
        query: Annotated[SemanticQuery | SemanticPlan, Field(
            description="Names from semantic_catalog: a model, its measures and dimensions, a window, filters, an order "
                        'and a limit; or a plan {"steps": [query, ...]} (2 or 3) whose later queries filter a '
                        'dimension by an earlier result: {"field": ..., "op": "in", "value": {"step": 1}}. A later '
                        'query answers for each value found, or, with "each": false, for them all together.')],
        db: Database = None,
    ) -> dict[str, Any]:
        """Run a semantic query or plan: the semantic layer writes the SQL (a plan as one query, its steps joined on
        the dimensions they filter), which runs read-only; returns the SQL, what it measured and how (the reading),
        and the rows. A query the layer rejects comes back with its reason."""
        with tool_errors():
            engine = catalog.engine(db)
            result = run_semantic_query(engine, query.model_dump())
        return {**result, "db": db or catalog.default, **_rows(result["rows"], result["truncated"])}

    @server.tool(annotations=READ_ONLY)
    def list_databases() -> dict[str, Any]:
        """The databases askchain can query, by name, and which one is the default."""
        return {"databases": catalog.describe(), "default": catalog.default}

    @server.tool(annotations=READ_ONLY)
    def describe_schema(db: Database = None) -> dict[str, Any]:
        """A database's tables with their columns, types, keys and descriptions, and the SQL dialect to write."""
        name = db or catalog.default
        with tool_errors():
            return schema_json(name, catalog.engine(name).schema())

    return server


def http_app(server: MCPServer, host: str, token: str | None):
    """The streamable-HTTP app (endpoint /mcp); with a token, every request must carry it as a Bearer header,
    without one only this machine's pages and programs are answered, as by `askchain serve` (the SDK checks Host and
    Origin itself too, when `host` is one of the loopback names it knows)."""
    app = server.streamable_http_app(host=host)
    return BearerToken(app, token) if token else LoopbackOnly(app)


def _rows(rows: list, truncated: bool) -> dict[str, Any]:
    """The first TOOL_ROWS rows as JSON values (exact decimals as text, bytes as hex), how many those are, and how
    many the result holds (`truncated`: it went past the engine's row cap, so it holds at least that many)."""
    returned = rows[:TOOL_ROWS]
    return {
        "rows": to_jsonable_python([list(r) for r in returned], bytes_mode="hex"),
        "rows_returned": len(returned),
        "row_count": len(rows),
        "truncated": truncated,
    }
