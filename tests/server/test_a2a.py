"""POST /a2a/generate: the AgentBeats-style task format, over a schema given in the request."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app


def client_replying(settings, sql: str):
    model = ScriptedModel(lambda request, i: f"```sql\n{sql}\n```")
    return TestClient(create_app(settings, model), base_url="http://localhost"), model  # the app is open on loopback


def test_names_and_typed_columns_over_an_empty_sqlite_copy(settings):
    client, model = client_replying(settings, "SELECT name FROM customers WHERE city = 'New York'")
    body = {
        "task_id": "sqlite_simple_select",
        "question": "Get all customers from New York",
        "schema": {"dialect": "sqlite", "tables": {
            "customers": {"columns": [{"name": "id", "type": "INTEGER"}, {"name": "name", "type": "TEXT"}, "city"]},
            "orders": {"columns": ["id", "customer_id", "total"]},
        }},
        "dialect": "sqlite",
    }
    with client:
        response = client.post("/a2a/generate", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["task_id"] == "sqlite_simple_select"
    assert data["sql"] == "SELECT name FROM customers WHERE city = 'New York'"
    assert "ran there without error" in data["reasoning"] and data["error"] is None
    prompt = model.requests[0].messages[-1][1]
    assert "CREATE TABLE customers" in prompt and "id INTEGER" in prompt and "city TEXT" in prompt


@pytest.mark.parametrize("written", [
    "SELECT COUNT(*) FROM `proj.ds.transfers` WHERE DATE(block_timestamp) = '2021-01-01'",
    "SELECT COUNT(*) FROM transfers WHERE DATE(block_timestamp) = '2021-01-01'",  # as the prompt names it
])
def test_bigquery_names_are_checked_on_duckdb_and_returned_qualified(settings, written):
    client, model = client_replying(settings, written)
    body = {
        "task_id": 7,
        "question": "How many transfers on 2021-01-01?",
        "schema": {"dialect": "bigquery", "tables": {
            "proj.ds.transfers": {"columns": [{"name": "block_timestamp", "type": "TIMESTAMP"}, {"name": "value", "type": "NUMERIC"}]},
        }},
    }
    with client:
        data = client.post("/a2a/generate", json=body).json()
    assert data["task_id"] == 7
    assert data["sql"] == "SELECT COUNT(*) FROM `proj.ds.transfers` WHERE DATE(block_timestamp) = '2021-01-01'"
    assert "ran there without error" in data["reasoning"], data["reasoning"]
    assert "CREATE TABLE transfers (" in model.requests[0].messages[-1][1]


def test_sql_that_fails_on_the_schema_is_reported(settings):
    client, _ = client_replying(settings, "SELECT missing_column FROM t")
    with client:
        data = client.post("/a2a/generate", json={"question": "q", "schema": {"tables": {"t": {"columns": ["a"]}}}}).json()
    assert data["sql"] == "SELECT missing_column FROM t"
    assert data["error"] and "failed there" in data["reasoning"]


def test_an_attached_database_is_used_when_named(settings):
    client, _ = client_replying(settings, "SELECT count(*) FROM singer")
    body = {"question": "How many singers?", "schema": {"database": "concert_singer", "tables": {"singer": {"columns": ["Singer_ID"]}}}}
    with client:
        data = client.post("/a2a/generate", json=body).json()
    assert "database 'concert_singer'" in data["reasoning"] and data["error"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"question": "q", "schema": {"tables": {}}},
        {"question": "q", "schema": {"tables": {"t": {"columns": []}}}},
        {"question": "", "schema": {"tables": {"t": {"columns": ["a"]}}}},
        {"question": "q", "schema": {"tables": {"t": {"columns": ["a"]}}}, "dialect": "klingon"},
        {"question": "q", "schema": {"dialect": "nope", "tables": {"t": {"columns": ["a"]}}}},
        {"question": "q", "schema": {"tables": {"t": {"columns": [{"type": "INT"}]}}}},
        {"question": "q"},
    ],
)
def test_a2a_validation(settings, body):
    client, model = client_replying(settings, "SELECT 1")
    with client:
        assert client.post("/a2a/generate", json=body).status_code == 422
    assert model.requests == []


def test_a_question_with_step_words_gets_one_query_not_a_plan(settings):
    """A2A callers take one query that stands alone: the planner stays off even under the pipeline method."""
    pipeline = settings.with_overrides(pipeline={"method": "pipeline", "examples_k": 0, "value_retrieval": False})
    client, model = client_replying(pipeline, "SELECT COUNT(*) FROM orders")
    body = {"question": "Compare the orders of the 5 customers that ordered most with those of the others",
            "schema": {"tables": {"orders": {"columns": ["id", "customer_id", "total"]}}}}
    with client:
        data = client.post("/a2a/generate", json=body).json()
    assert data["sql"] == "SELECT COUNT(*) FROM orders"
    assert "plan" not in {request.template for request in model.requests}
