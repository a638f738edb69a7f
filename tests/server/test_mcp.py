"""`askchain mcp` end to end with the MCP SDK's own client: over stdio (the CLI as a subprocess), over streamable
HTTP (in a thread with the scripted model, and the CLI as a subprocess behind a token), and in process for the
table of refusals. The database is a small shop made here; one test (`-m llm`) asks the embedded model.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from askchain.config import Settings
from askchain.llm.fake import ScriptedModel
from askchain.server.catalog import Catalog

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from askchain.mcp_server.server import TOOL_ROWS, build_server, http_app  # noqa: E402

TOOLS = {"ask", "run_sql", "list_databases", "describe_schema", "semantic_catalog", "semantic_query"}
CUSTOMERS = [(1, "Ada", "France"), (2, "Bo", "Sweden"), (3, "Cy", "France"), (4, "Di", "Kenya")]


@pytest.fixture
def shop(tmp_path) -> Path:
    """Three related tables: customers, products and the orders joining them."""
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
            CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                                 product_id INTEGER REFERENCES products(id), quantity INTEGER, ordered_on DATE);
        """)
        db.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
        db.executemany("INSERT INTO products VALUES (?, ?, ?)", [(1, "Tea", 4.5), (2, "Cup", 9.0)])
        db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                       [(i, 1 + i % 4, 1 + i % 2, i, f"2026-01-{i:02d}") for i in range(1, 301)])
    return path


@pytest.fixture
def shop_settings(tmp_path, shop) -> Settings:
    return Settings().with_overrides(
        paths={"data_dir": str(tmp_path / "data"), "cache_dir": str(tmp_path / "cache")},
        llm={"cache": False},
        server={"databases": {"shop": str(shop)}, "default_db": "shop"},
        pipeline={"method": "baseline"},  # the scripted model answers the baseline's prompt
    )


def shop_reply(request, i: int) -> str:
    """SQL for the question, then a summary that quotes the rows it was shown."""
    system, user = request.messages[0][1], request.messages[-1][1]
    if "explain the result" in system:
        first_row = user.split("Result (", 1)[1].splitlines()[2]
        return f"The answer is {first_row.split(' | ')[-1]}."
    question = re.search(r"-- Question: (.*)", user).group(1)
    if "country" in question:
        return "```sql\nSELECT country, count(*) AS customers FROM customers GROUP BY country ORDER BY customers DESC\n```"
    return "```sql\nSELECT count(*) FROM customers\n```"


def call(client: Client, tool: str, **arguments):
    return client.call_tool(tool, arguments)


def error_text(result) -> str:
    assert result.is_error, result
    (content,) = result.content
    return content.text


def customer_count(shop: Path) -> int:
    with sqlite3.connect(shop) as db:
        return db.execute("SELECT count(*) FROM customers").fetchone()[0]


def stdio_server(shop: Path, *args: str) -> StdioServerParameters:
    """`askchain mcp` as an MCP client starts it; askchain's own settings (data dir...) pass through."""
    env = {key: value for key, value in os.environ.items() if key.startswith("ASKCHAIN_")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "askchain.cli", "mcp", "--db", f"shop={shop}", *args],
        env={**env, "ASKCHAIN_SERVER__DEFAULT_DB": "shop"},
    )


async def check_tools(client: Client, shop: Path) -> None:
    """What every transport must do without a model: list, describe, run SQL, refuse writes."""
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS

    databases = (await call(client, "list_databases")).structured_content
    assert databases["default"] == "shop"
    assert {"name": "shop", "default": True} in [{k: d[k] for k in ("name", "default")} for d in databases["databases"]]

    schema = (await call(client, "describe_schema", db="shop")).structured_content
    tables = {table["name"]: table for table in schema["tables"]}
    assert schema["dialect"] == "sqlite" and set(tables) == {"customers", "products", "orders"}
    assert [(c["name"], c["type"], c["primary_key"]) for c in tables["customers"]["columns"]] == [
        ("id", "INTEGER", True), ("name", "TEXT", False), ("country", "TEXT", False)]
    assert {"columns": ["customer_id"], "ref_table": "customers", "ref_columns": ["id"]} in tables["orders"]["foreign_keys"]

    rows = await call(client, "run_sql", sql="SELECT name FROM customers WHERE country = 'France' ORDER BY name")
    assert not rows.is_error
    assert rows.structured_content["rows"] == [["Ada"], ["Cy"]] and rows.structured_content["row_count"] == 2

    refused = error_text(await call(client, "run_sql", sql="DELETE FROM customers", db="shop"))
    assert "read-only" in refused and "\n" not in refused and "Traceback" not in refused
    assert customer_count(shop) == len(CUSTOMERS)


def test_stdio_lists_describes_runs_and_refuses(shop, tmp_path):
    log = tmp_path / "mcp-stdio.log"

    async def session():
        with open(log, "w") as errors:
            async with Client(stdio_client(stdio_server(shop), errlog=errors)) as client:
                await check_tools(client, shop)
                unknown = error_text(await call(client, "describe_schema", db="nowhere"))
                assert "unknown database 'nowhere'" in unknown and "shop" in unknown
                assert "the question is empty" in error_text(await call(client, "ask", question="  "))

    asyncio.run(session())
    assert "Traceback" not in log.read_text()


def test_streamable_http_answers_with_the_scripted_model(shop, shop_settings, live_server):
    model = ScriptedModel(shop_reply)
    base = live_server(http_app(build_server(shop_settings, Catalog(shop_settings), model), "127.0.0.1", None))

    async def session():
        async with Client(f"{base}/mcp") as client:
            await check_tools(client, shop)
            answered = (await call(client, "ask", question="How many customers are there per country?")).structured_content
            assert answered["sql"].startswith("SELECT country, count(*)")
            assert answered["columns"] == ["country", "customers"]
            assert answered["rows"][0] == ["France", 2] and answered["row_count"] == answered["rows_returned"] == 3
            assert not answered["truncated"]
            assert answered["answer"].splitlines()[0] == "1. **France** — 2 customers" and answered["error"] is None
            assert answered["db"] == "shop" and answered["model"] == "fake:scripted" and answered["method"] == "baseline"
            assert "chart" not in answered

            counted = (await call(client, "ask", question="How many customers?", method="self-consistency")).structured_content
            assert counted["rows"] == [[len(CUSTOMERS)]] and counted["method"] == "self-consistency"

    asyncio.run(session())


def test_rows_are_capped_and_counted_in_full(shop, shop_settings):
    async def session():
        async with Client(build_server(shop_settings, Catalog(shop_settings), ScriptedModel(shop_reply))) as client:
            result = (await call(client, "run_sql", sql="SELECT * FROM orders")).structured_content
            assert len(result["rows"]) == result["rows_returned"] == TOOL_ROWS < 300
            assert result["row_count"] == 300 and not result["truncated"]  # the whole result, under db.max_rows

    asyncio.run(session())


def test_past_the_engine_row_cap_the_count_stops_there_and_says_so(shop, shop_settings):
    capped = shop_settings.with_overrides(db={"max_rows": 250})

    async def session():
        async with Client(build_server(capped, Catalog(capped), ScriptedModel(shop_reply))) as client:
            return (await call(client, "run_sql", sql="SELECT * FROM orders")).structured_content

    result = asyncio.run(session())
    assert (result["rows_returned"], result["row_count"], result["truncated"]) == (TOOL_ROWS, 250, True)


def test_http_on_loopback_refuses_a_foreign_host(shop, shop_settings, live_server):
    """A DNS-rebinding page reaches 127.0.0.1 under its own name; so does another site's Origin."""
    base = live_server(http_app(build_server(shop_settings, Catalog(shop_settings)), "127.0.0.1", None))
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    foreign = httpx.post(f"{base}/mcp", json=listing, headers={"Host": "askchain.example:8001"}, timeout=10)
    assert foreign.status_code == 421 and "localhost, 127.0.0.1 or [::1]" in foreign.json()["detail"]
    elsewhere = httpx.post(f"{base}/mcp", json=listing, headers={"Origin": "https://evil.example"}, timeout=10)
    assert elsewhere.status_code == 403


@pytest.mark.parametrize("tool, arguments, message", [
    ("run_sql", {"sql": "DROP TABLE customers"}, "read-only"),
    ("run_sql", {"sql": "UPDATE customers SET name = 'x'"}, "read-only"),
    ("run_sql", {"sql": "WITH gone AS (DELETE FROM customers RETURNING id) SELECT * FROM gone"}, "read-only"),
    ("run_sql", {"sql": "ATTACH DATABASE '/tmp/x.sqlite' AS x"}, "read-only"),
    ("run_sql", {"sql": "SELECT nope FROM customers"}, "nope"),
    ("run_sql", {"sql": "SELECT 1", "db": "nowhere"}, "unknown database 'nowhere'"),
    ("ask", {"question": ""}, "the question is empty"),
    ("ask", {"question": "How many customers?", "db": "nowhere"}, "unknown database 'nowhere'"),
    ("ask", {"question": "How many customers?", "method": "guess"}, "guess"),
    ("describe_schema", {"db": "nowhere"}, "unknown database 'nowhere'"),
])
def test_refusals_are_one_line_tool_errors(tool, arguments, message, shop, shop_settings):
    model = ScriptedModel(shop_reply)

    async def session():
        async with Client(build_server(shop_settings, Catalog(shop_settings), model)) as client:
            return error_text(await client.call_tool(tool, arguments))

    text = asyncio.run(session())
    assert message in text and "\n" not in text and "Traceback" not in text
    assert customer_count(shop) == len(CUSTOMERS)
    if tool == "ask" and "method" not in arguments:
        assert not model.requests  # refused before any model call


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_over_http_needs_its_token(shop, tmp_path):
    port, token = free_port(), "s3cret-token"
    log = open(tmp_path / "mcp-http.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "askchain.cli", "mcp", "--transport", "http", "--port", str(port), "--db", f"shop={shop}"],
        env={**os.environ, "ASKCHAIN_SERVER__TOKEN": token, "ASKCHAIN_SERVER__DEFAULT_DB": "shop"},
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp-http.log").read_text()
                time.sleep(0.3)
        assert refused.status_code == 401 and "API token" in refused.json()["detail"]
        wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer guess"}, timeout=5)
        assert wrong.status_code == 401 and wrong.json()["detail"] == "the API token is wrong"

        async def session():
            import httpx2

            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    await check_tools(client, shop)

        asyncio.run(session())
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.org"])
def test_cli_refuses_http_beyond_loopback_without_a_token(host):
    env = {k: v for k, v in os.environ.items() if k != "ASKCHAIN_SERVER__TOKEN"}
    done = subprocess.run([sys.executable, "-m", "askchain.cli", "mcp", "--transport", "http", "--host", host],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: --host {host} is reachable from other machines: give an API "
                                                "token with --token or ASKCHAIN_SERVER__TOKEN"]


@pytest.mark.llm
@pytest.mark.timeout(900)
def test_stdio_answers_with_the_embedded_model(shop, tmp_path):
    log = tmp_path / "mcp-llm.log"

    async def session():
        with open(log, "w") as errors:
            async with Client(stdio_client(stdio_server(shop), errlog=errors), read_timeout_seconds=800) as client:
                return (await call(client, "ask", question="How many customers are there?", method="baseline"))

    result = asyncio.run(session())
    assert not result.is_error, result.content
    answered = result.structured_content
    assert Settings().llm.model in answered["model"]  # the default model, e.g. llamacpp:qwen2.5-coder-1.5b
    assert "customers" in answered["sql"].lower() and answered["rows"] == [[len(CUSTOMERS)]]
    assert str(len(CUSTOMERS)) in answered["answer"]
