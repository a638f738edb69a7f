"""The HTTP server beyond loopback: with an API token every API route needs `Authorization: Bearer`, the page,
its assets and /health stay open; `askchain serve` will not listen beyond loopback without a token."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from askchain.server.app import create_app
from askchain.server.auth import is_loopback

TOKEN = "correct-horse-battery-staple"

API_REQUESTS = [
    ("GET", "/databases", None, 200),
    ("GET", "/schema/concert_singer", None, 200),
    ("GET", "/threads/none-yet", None, 404),
    ("POST", "/query", {"question": "How many singers are there?"}, 200),
    ("POST", "/a2a/generate", {"task_id": "t1", "question": "How many singers are there?",
                               "schema": {"dialect": "sqlite", "tables": {"singer": {"columns": ["name"]}}}}, 200),
    ("GET", "/openapi.json", None, 200),
]
OPEN_PATHS = ["/", "/health", "/static/app.js", "/static/app.css", "/vendor/plotly.min.js"]


@pytest.fixture
def guarded(settings, fake_model):
    """The app as `askchain serve --host 0.0.0.0 --token ...` builds it."""
    with TestClient(create_app(settings.with_overrides(server={"token": TOKEN}), fake_model)) as client:
        yield client


@pytest.mark.parametrize("method, path, body, status", API_REQUESTS)
def test_api_routes_need_the_token(guarded, method, path, body, status):
    missing = guarded.request(method, path, json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in missing.json()["detail"]
    for header in (f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer "):
        wrong = guarded.request(method, path, json=body, headers={"Authorization": header})
        assert wrong.status_code == 401, header
        assert wrong.json()["detail"] == "the API token is wrong"
    served = guarded.request(method, path, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert served.status_code == status, served.text


def test_query_streams_to_the_token_holder(guarded, sse):
    response = guarded.post("/query", json={"question": "How many singers are there?"},
                            headers={"Authorization": f"bearer {TOKEN}"})  # the scheme is case-insensitive
    events = dict(sse(response.text))
    assert events["rows"]["rows"] == [[6]] and events["answer"]["text"] == "There are **6** singers."


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_page_assets_and_health_stay_open(guarded, path):
    assert guarded.get(path).status_code == 200


def test_loopback_app_without_token_is_open(settings, fake_model, local_client):
    with local_client(create_app(settings, fake_model)) as client:
        assert client.get("/databases").status_code == 200
        assert client.get("/schema/concert_singer").status_code == 200


FOREIGN_HOSTS = ["askchain.example", "askchain.example:8000", "evil.example:8000", "127.0.0.1.nip.io:8000",
                 "localhost.evil.example", "10.0.0.5:8000", "0.0.0.0:8000", "[::1", ""]
LOCAL_HOSTS = ["localhost", "localhost:8000", "LOCALHOST:8000", "127.0.0.1:8000", "127.0.0.1", "[::1]:8000", "[::1]"]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_loopback_app_refuses_a_foreign_host(settings, fake_model, local_client, host):
    """A page on a domain its attacker points at 127.0.0.1 (DNS rebinding) sends its own name as Host."""
    with local_client(create_app(settings, fake_model)) as client:
        for method, path, body, _ in API_REQUESTS:
            refused = client.request(method, path, json=body, headers={"Host": host})
            assert refused.status_code == 421, (path, refused.text)
            assert "localhost, 127.0.0.1 or [::1]" in refused.json()["detail"]
        assert client.get("/", headers={"Host": host}).status_code == 421  # the page too: it would run the attack


@pytest.mark.parametrize("host", LOCAL_HOSTS)
def test_loopback_app_answers_its_own_names(settings, fake_model, local_client, host):
    with local_client(create_app(settings, fake_model)) as client:
        assert client.get("/databases", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("origin, status", [
    ("http://localhost:8000", 200), ("http://127.0.0.1:8000", 200), ("http://[::1]:3000", 200),
    ("https://localhost", 200), ("https://evil.example", 403), ("http://evil.example:8000", 403), ("null", 403),
    ("file://", 403), ("http://localhost.evil.example", 403),
])
def test_loopback_app_answers_only_pages_of_this_machine(settings, fake_model, local_client, origin, status):
    """Another site the user visits may post to 127.0.0.1 straight away; its Origin names it."""
    with local_client(create_app(settings, fake_model)) as client:
        response = client.post("/query", json={"question": "How many singers are there?"}, headers={"Origin": origin})
        assert response.status_code == status, response.text


def test_with_a_token_the_host_is_not_checked(guarded):
    """Beyond loopback the server is reached under any name; the token is what admits a caller."""
    response = guarded.get("/databases", headers={"Host": "askchain.example", "Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("10.0.0.1", False), ("askchain.example", False),
])
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def serve(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ASKCHAIN_SERVER__TOKEN"}
    return subprocess.run([sys.executable, "-m", "askchain.cli", "serve", *args], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "203.0.113.9"])
def test_serve_refuses_beyond_loopback_without_a_token(host):
    done = serve("--host", host, "--port", "1")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: --host {host} is reachable from other machines: give an API "
                                                "token with --token or ASKCHAIN_SERVER__TOKEN"]
