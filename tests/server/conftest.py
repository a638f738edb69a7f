"""Shared fixtures: an app over the fixture database (tests/conftest.py) with a scripted model."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from askchain.config import Settings
from askchain.llm.fake import ScriptedModel

pytest.importorskip("fastapi")
pytest.importorskip("sse_starlette")


def sql(text: str) -> str:
    return f"```sql\n{text}\n```"


def generate(request, i: int) -> str:
    question = request.values["question"]
    if "France" in question:
        return sql("SELECT count(*) FROM singer WHERE country = 'France'")
    if "country" in question:
        return sql("SELECT country, count(*) AS singers FROM singer GROUP BY country ORDER BY singers DESC")
    if "broken" in question:
        return sql("SELECT nope FROM singer")
    return sql("SELECT count(*) FROM singer")


def summarize(request, i: int) -> str:
    """A faithful summary of the rows shown to the model."""
    rows = [line.split(" | ") for line in request.values["table"].splitlines()[1:]]
    if len(rows) == 1:
        return f"There are {rows[0][0]} matching singers."
    return f"{rows[0][0]} has the most singers, {rows[0][1]}; " + " and ".join(r[0] for r in rows[1:]) + " have 1 each."


def rewrite(request, i: int) -> str:
    follow_up = request.values["question"]
    return "How many singers are from France?" if "France" in follow_up else "How many singers are there?"


#: Replies by prompt template: the baseline's SQL, the answer's summary, follow-up rewrites.
SCRIPT = {"direct": generate, "summarize": summarize, "rewrite": rewrite}


@pytest.fixture
def fake_model():
    return ScriptedModel(SCRIPT)


@pytest.fixture
def script():
    return SCRIPT


@pytest.fixture
def new_model():
    """A factory of fresh scripted models (one per app instance)."""
    return lambda: ScriptedModel(SCRIPT)


@pytest.fixture
def local_client():
    """A function app -> TestClient addressing the app as this machine's programs do (Host: localhost): an app
    without a token is open on loopback only and refuses other Hosts, TestClient's default `testserver` among them."""
    from fastapi.testclient import TestClient

    return lambda app: TestClient(app, base_url="http://localhost")


@pytest.fixture
def settings(tmp_path, concert_db) -> Settings:
    return Settings().with_overrides(
        paths={"data_dir": str(tmp_path / "data"), "cache_dir": str(tmp_path / "cache")},
        llm={"cache": False},
        # the scripted model answers the baseline's prompt; the pipeline's own events are tested with a stand-in method
        pipeline={"method": "baseline"},
        server={"databases": {"concert_singer": str(concert_db)}, "default_db": "concert_singer"},
    )


@pytest.fixture
def sse():
    return parse_sse


def parse_sse(text: str) -> list[tuple[str, dict]]:
    """(event name, data) pairs from a Server-Sent Events body."""
    events = []
    for block in re.split(r"\r?\n\r?\n", text):
        name, data = "message", []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events


@pytest.fixture
def live_server():
    """Start apps on loopback ports with uvicorn in a thread; yields a function app -> base URL."""
    import socket
    import threading
    import time

    uvicorn = pytest.importorskip("uvicorn")
    servers = []

    def start(app) -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        servers.append((server, thread))
        return f"http://127.0.0.1:{port}"

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def serve_command(tmp_path):
    """Run `askchain serve ARGS...` as a subprocess on a free loopback port; yields a function ARGS -> base URL.

    Its data dir is the test session's (so datasets and indexes built by other tests are reused)."""
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    processes = []

    def start(*args: str, env: dict[str, str] | None = None) -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        log_path = tmp_path / f"serve-{port}.log"
        log = open(log_path, "w")
        process = subprocess.Popen(
            [sys.executable, "-m", "askchain.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
            env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
        )
        processes.append((process, log))
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    return base
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("askchain serve did not start:\n" + log_path.read_text())
            time.sleep(0.3)

    yield start
    for process, log in processes:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


CHROMIUM = os.environ.get("ASKCHAIN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]


@pytest.fixture
def browser():
    """Headless Debian Chromium driven by Playwright (its own browser downloads are not available here)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_ui(browser):
    """A function (base URL, page options) -> (page, errors): the web UI open with its schema shown, and the page
    errors it raises collected for the test to assert there are none."""

    def open_page(base: str, **options):
        page = browser.new_page(**options)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base)
        page.wait_for_selector(".schema details.table")
        return page, errors

    return open_page
