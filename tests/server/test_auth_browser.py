"""The web UI against a server with an API token, in headless Chromium: it asks for the token, keeps it for the
tab, and sends it on every API request, the streamed POST /query included."""

from __future__ import annotations

import pytest

from askchain.server.app import create_app

pytestmark = pytest.mark.browser

TOKEN = "tab-token-42"


def test_page_asks_for_the_token_then_answers(browser, live_server, settings, fake_model):
    base = live_server(create_app(settings.with_overrides(server={"token": TOKEN}), fake_model))
    page = browser.new_page()
    sent, errors = [], []
    page.on("request", lambda r: sent.append((r.method, r.url.removeprefix(base), r.headers.get("authorization"))))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "401" not in m.text else None)
    page.goto(base)

    dialog = page.locator("#token-dialog")
    dialog.wait_for(state="visible")
    assert "API token" in page.inner_text("#token-reason")
    page.fill("#token", "not-it")
    page.press("#token", "Enter")
    page.wait_for_function("document.querySelector('#token-reason').textContent.includes('wrong')")
    assert dialog.is_visible()
    page.fill("#token", TOKEN)
    page.click("#token-dialog button[type=submit]")

    page.wait_for_selector(".schema details.table")
    assert not dialog.is_visible()
    assert "singer" in page.inner_text("#schema")
    page.fill("#question", "How many singers are there?")
    page.press("#question", "Enter")
    turn = page.locator(".turn").first
    turn.locator(".turn-footer").wait_for()
    assert turn.locator(".answer").inner_text() == "There are 6 singers."
    assert page.evaluate("sessionStorage.getItem('askchain.token')") == TOKEN
    assert ("POST", "/query", f"Bearer {TOKEN}") in sent

    page.reload()  # the tab keeps its token: no second prompt
    page.locator(".turn .answer").first.wait_for()  # the thread comes back through GET /threads/{id}
    assert not dialog.is_visible()
    assert page.locator(".turn .answer").first.inner_text() == "There are 6 singers."
    assert not errors, errors
