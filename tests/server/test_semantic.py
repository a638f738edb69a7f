"""The governed semantic model for other agents, over a small local Ethereum dataset: the HTTP API and the MCP server
list its measures, dimensions and windows and run a semantic query through the safe executor; a database without
a semantic model, and a query the layer rejects, are one-line refusals."""

from __future__ import annotations

import asyncio

import pytest

from askchain.config import Settings
from askchain.domains.ethereum.dataset import build_dataset, utc_today
from askchain.server.catalog import Catalog

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from askchain.mcp_server.server import build_server  # noqa: E402
from askchain.server.app import create_app  # noqa: E402

FAILED_SHARE = {"model": "transactions", "measures": ["failed_share"], "dimensions": ["day"],
                "window": {"name": "last_n_days", "n": 3}, "order_by": [{"field": "day", "direction": "asc"}]}
#: The busiest day of the last 3, then its transactions per hour: a plan the layer writes as one query.
BUSIEST_DAY_HOURLY = {"steps": [
    {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"],
     "window": {"name": "last_n_days", "n": 3}, "order_by": [{"field": "transaction_count", "direction": "desc"}],
     "limit": 1},
    {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["hour_of_day"],
     "window": {"name": "last_n_days", "n": 3}, "filters": [{"field": "day", "op": "in", "value": {"step": 1}}]},
]}


@pytest.fixture(scope="module")
def eth_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("eth") / "crypto_ethereum.duckdb"
    build_dataset(path, days=6, scale=0.001, seed=3, end=utc_today(), progress=False)
    return path


@pytest.fixture
def settings(tmp_path, eth_file, concert_db) -> Settings:
    return Settings().with_overrides(
        paths={"data_dir": str(tmp_path / "data"), "cache_dir": str(tmp_path / "cache")}, llm={"cache": False},
        server={"databases": {"eth": str(eth_file), "concert": str(concert_db)}, "default_db": "eth"},
    )


def test_the_api_lists_the_catalog_and_runs_a_semantic_query(settings, local_client):
    client = local_client(create_app(settings))
    catalog = client.get("/semantic/eth").json()
    transactions = next(m for m in catalog["models"] if m["name"] == "transactions")
    assert {"name": "failed_share", "unit": "fraction"}.items() <= next(
        m for m in transactions["measures"] if m["name"] == "failed_share").items()
    assert "last_n_days" in {w["name"] for w in catalog["windows"]}

    answer = client.post("/semantic/eth/query", json=FAILED_SHARE).json()
    assert "`bigquery-public-data.crypto_ethereum.transactions`" in answer["sql"]
    assert answer["reading"].startswith("failed share of transactions, a fraction")
    assert answer["columns"] == ["day", "failed_share"] and len(answer["rows"]) == 3
    assert all(0 <= share <= 1 for _, share in answer["rows"])

    planned = client.post("/semantic/eth/query", json=BUSIEST_DAY_HOURLY).json()
    assert planned["sql"].startswith("WITH step_1 AS") and "; then step 2: " in planned["reading"]
    assert planned["columns"] == ["day", "transaction_count", "hour_of_day", "transaction_count_2"]
    assert len({row[0] for row in planned["rows"]}) == 1
    assert sum(row[3] for row in planned["rows"]) == planned["rows"][0][1]  # the day's hours add up to the day


def test_the_api_refuses_in_one_line(settings, local_client):
    client = local_client(create_app(settings))
    rejected = client.post("/semantic/eth/query", json={**FAILED_SHARE, "window": {"name": "last_n_days"}})
    assert rejected.status_code == 400 and "last_n_days" in rejected.json()["detail"]
    unknown = client.post("/semantic/eth/query", json={**FAILED_SHARE, "measures": ["nope"]})
    assert unknown.status_code == 400 and "\n" not in unknown.json()["detail"]
    plain = client.get("/semantic/concert")
    assert plain.status_code == 400 and "no semantic model" in plain.json()["detail"]
    assert client.post("/semantic/eth/query", json={"model": "transactions", "extra": 1}).status_code == 422


def test_mcp_offers_the_catalog_and_semantic_queries(settings):
    async def session():
        async with Client(build_server(settings, Catalog(settings))) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"semantic_catalog", "semantic_query"} <= names
            catalog = (await client.call_tool("semantic_catalog", {"db": "eth"})).structured_content
            assert "transactions" in {m["name"] for m in catalog["models"]}
            result = (await client.call_tool("semantic_query", {"query": FAILED_SHARE})).structured_content
            assert result["rows_returned"] == result["row_count"] == 3 and result["reading"]
            planned = (await client.call_tool("semantic_query", {"query": BUSIEST_DAY_HOURLY})).structured_content
            assert planned["sql"].startswith("WITH step_1 AS") and planned["row_count"] >= 1
            busiest_two = {**BUSIEST_DAY_HOURLY["steps"][0], "limit": 2}
            their_total = {**BUSIEST_DAY_HOURLY["steps"][1], "dimensions": []}
            each, together = [(await client.call_tool("semantic_query", {"query": {
                "steps": [busiest_two, their_total], "each": each}})).structured_content for each in (True, False)]
            assert each["row_count"] == 2 and together["columns"] == ["transaction_count"]
            assert together["rows"] == [[sum(row[-1] for row in each["rows"])]]  # the two days' counts, together
            refused = await client.call_tool("semantic_catalog", {"db": "concert"})
            assert refused.is_error and "no semantic model" in refused.content[0].text

    asyncio.run(session())
