"""The HTTP API with a scripted model over the fixture database (concert_singer's schema)."""

from __future__ import annotations

import pytest

from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app
from askchain.server.turn import STREAMED_ROWS


@pytest.fixture
def client(settings, fake_model, local_client):
    with local_client(create_app(settings, fake_model)) as client:
        yield client


@pytest.fixture
def ask(sse):
    def ask(client, **body):
        response = client.post("/query", json={"db": "concert_singer", **body})
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return sse(response.text)

    return ask


def names(events):
    return [name if name != "stage" else f"{data['stage']}:{data['status']}" for name, data in events]


def test_query_streams_stages_then_results(client, ask):
    events = ask(client, question="How many singers by country?")
    assert names(events) == [
        "start",
        "build_context:start", "build_context:end", "draft:start", "candidates", "draft:end",
        "revise:start", "revision", "revise:end", "select:start", "selected", "sql", "rows", "select:end",
        "confidence:start", "confidence", "confidence:end", "answer:start", "answer", "chart", "answer:end", "done",
    ]
    data = dict(events)
    assert data["sql"]["sql"].startswith("SELECT country, count(*)")
    assert data["rows"]["columns"] == ["Country", "singers"]
    assert data["rows"]["rows"][0] == ["France", 4] and data["rows"]["row_count"] == data["rows"]["rows_returned"] == 3
    assert data["chart"]["chart"]["kind"] == "bar"
    done = data["done"]
    assert done["thread_id"] == data["start"]["thread_id"] and done["turn"] == 1
    assert done["tokens"] > 0 and done["seconds"] >= 0 and done["model"] == "fake:scripted"
    assert {"run_id", "bytes_processed", "usage"} <= set(done)


def test_no_rewrite_call_without_history(client, fake_model, ask):
    events = ask(client, question="How many singers are there?")
    assert "rewrite" not in dict(events)
    templates = [r.template for r in fake_model.requests]
    assert templates[0] == "direct" and "rewrite" not in templates
    assert dict(events)["answer"]["text"] == "There are **6** singers."  # a template's: no summary call


def test_follow_up_is_rewritten_and_threads_survive_a_restart(settings, new_model, ask, local_client):
    with local_client(create_app(settings, new_model())) as first:
        thread_id = dict(ask(first, question="How many singers are there?"))["done"]["thread_id"]
    with local_client(create_app(settings, new_model())) as second:  # a new server, same data dir
        events = ask(second, question="and only those from France?", thread_id=thread_id)
        data = dict(events)
        assert names(events)[:4] == ["start", "rewrite:start", "rewrite", "rewrite:end"]
        assert data["rewrite"] == {"type": "rewrite", "original": "and only those from France?", "question": "How many singers are from France?"}
        assert "France" in data["sql"]["sql"] and data["rows"]["rows"] == [[4]]
        assert data["done"]["turn"] == 2
        thread = second.get(f"/threads/{thread_id}").json()
    assert [t["question"] for t in thread["turns"]] == ["How many singers are there?", "and only those from France?"]
    assert thread["turns"][1]["asked"] == "How many singers are from France?"
    assert thread["turns"][0]["rows"] == [[6]] and thread["turns"][0]["steps"] == []
    assert thread["turns"][0]["confidence"]["level"] in ("high", "medium", "low")


def test_failing_sql_is_reported_in_events_not_as_a_server_error(client, ask):
    data = dict(ask(client, question="the broken one"))
    assert data["rows"]["error"] and "nope" in data["rows"]["error"]
    assert data["answer"]["text"].startswith("I could not answer this question")
    assert data["chart"]["chart"] is None
    assert data["done"]["error"] == data["rows"]["error"]


def test_model_failures_become_error_events(settings, ask, local_client):
    def explode(request, i):
        raise RuntimeError("boom")

    with local_client(create_app(settings, ScriptedModel(explode))) as client:
        events = ask(client, question="How many singers are there?")
        assert events[-1] == ("error", {"type": "error", "message": "internal error (logged on the server)", "thread_id": events[0][1]["thread_id"]})
        events = ask(client, question="How many singers are there?", model="/tmp/weights.gguf")
        assert events[-1][0] == "error" and "model files cannot be chosen" in events[-1][1]["message"]


@pytest.mark.parametrize(
    "body, status",
    [
        ({"question": "q", "db": "no_such_db"}, 404),
        ({"question": ""}, 422),
        ({"question": "   "}, 422),
        ({"question": "x" * 2001}, 422),
        ({"question": "q", "method": "magic"}, 422),
        ({"question": "q", "thread_id": "../../etc"}, 422),
        ({"question": "q", "surprise": 1}, 422),
        ({"db": "concert_singer"}, 422),
    ],
)
def test_query_input_validation(client, body, status):
    response = client.post("/query", json=body)
    assert response.status_code == status
    assert "detail" in response.json()


def test_malformed_json_is_422(client):
    response = client.post("/query", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_oversized_body_is_413(client):
    response = client.post("/query", content=b"{" + b" " * 2_100_000 + b"}", headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_beyond_the_concurrency_limit_is_429(settings, fake_model, ask, local_client):
    app = create_app(settings, fake_model, max_concurrent=1)
    with local_client(app) as client:
        assert app.state.slots.acquire()  # one question in flight
        response = client.post("/query", json={"question": "How many singers are there?"})
        assert response.status_code == 429 and response.headers["retry-after"]
        assert "limit" in response.json()["detail"]
        app.state.slots.release()
        assert dict(ask(client, question="How many singers are there?"))["done"]
        assert app.state.slots.active == 0


def test_databases_schema_threads_and_health(client):
    listed = client.get("/databases").json()
    assert "concert_singer" in [d["name"] for d in listed["databases"]]
    assert listed["default"] == "concert_singer"  # settings.pipeline.default_db
    assert [d["name"] for d in listed["databases"] if d["default"]] == ["concert_singer"]
    schema = client.get("/schema/concert_singer").json()
    singer = next(t for t in schema["tables"] if t["name"] == "singer")
    assert schema["dialect"] == "sqlite" and singer["row_count"] == 6
    assert {"name": "Singer_ID", "type": "INT", "primary_key": True, "description": None} in singer["columns"]
    assert client.get("/schema/nowhere").status_code == 404
    assert client.get("/threads/unknown-thread").status_code == 404
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["model"] == "fake:scripted" and health["engine"] == "fake"
    assert health["versions"]["askchain"] and "baseline" in health["methods"]


def test_ui_and_assets_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and "<title>askchain</title>" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # nothing from a CDN
    for asset in ("/static/app.js", "/static/app.css", "/static/sql.js", "/static/vendor/marked.umd.js", "/static/vendor/purify.min.js"):
        assert client.get(asset).status_code == 200
    plotly = client.get("/vendor/plotly.min.js")
    assert plotly.status_code == 200 and plotly.headers["content-type"].startswith("text/javascript")


def test_pipeline_events_stream_from_the_graph_before_the_answer(settings, fake_model, ask, local_client):
    """The run's own events (stages, candidates, selection) reach the client in order, the rows before the words."""
    settings = settings.with_overrides(pipeline={"examples_k": 0})
    with local_client(create_app(settings, fake_model)) as client:
        events = ask(client, question="How many singers are there?", method="pipeline")
    order = names(events)
    assert order[0] == "start" and order[-1] == "done"
    for earlier, later in (("draft:start", "candidates"), ("candidates", "selected"), ("selected", "sql"),
                           ("sql", "rows"), ("rows", "answer:start"), ("answer", "chart")):
        assert order.index(earlier) < order.index(later)
    data = dict(events)
    assert data["candidates"]["generator"] == "direct" and data["candidates"]["sql"]
    assert data["rows"]["rows"] == [[6]]
    assert data["done"]["run_id"] and data["done"]["method"] == "pipeline"

def test_rows_streamed_are_capped_and_counted_in_full(settings, local_client, ask):
    """The browser gets the first STREAMED_ROWS rows; `row_count` counts the whole result beside them."""
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) SELECT i FROM n"
    model = ScriptedModel({"direct": f"```sql\n{many}\n```", "summarize": "The numbers run from 1 to 1500."})
    with local_client(create_app(settings, model)) as client:
        rows = dict(ask(client, question="Which numbers are there?"))["rows"]
    assert (len(rows["rows"]), rows["rows_returned"], rows["row_count"]) == (STREAMED_ROWS, STREAMED_ROWS, 1500)
    assert not rows["truncated"]  # under db.max_rows: the count is the result's own
