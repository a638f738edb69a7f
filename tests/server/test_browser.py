"""The web UI in headless Chromium (Playwright), with the scripted model: ask, follow up, sort, screenshot.

The README's picture comes from the same UI with the embedded model on Ethereum (test_browser_llm.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from askchain.server.app import create_app

pytestmark = pytest.mark.browser


def test_ask_follow_up_and_screenshot(browser, live_server, settings, fake_model, tmp_path):
    base = live_server(create_app(settings, fake_model))
    page = browser.new_page(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(base)

    page.wait_for_selector(".schema details.table")
    assert "singer" in page.inner_text("#schema")
    page.fill("#schema-filter", "song_release")
    assert page.locator(".schema details.table").count() == 1  # only singer has Song_release_year
    page.fill("#schema-filter", "")

    page.fill("#question", "How many singers by country?")
    page.press("#question", "Enter")
    first = page.locator(".turn").nth(0)
    first.locator(".turn-footer").wait_for()
    assert first.locator(".answer").inner_text() == "France has the most singers, 4; United States and Netherlands have 1 each."
    assert first.locator(".stage.done").count() >= 3 and first.locator(".stage.running").count() == 0
    assert "GROUP BY" in first.locator("pre.sql").inner_text()
    assert first.locator("pre.sql .kw").count() > 3  # highlighted
    first.locator(".chart .main-svg").first.wait_for()  # Plotly drew the bar chart
    cells = first.locator("table.results tbody tr td:first-child")
    assert cells.all_inner_texts() == ["France", "United States", "Netherlands"]
    first.locator("table.results th", has_text="Country").click()
    assert cells.all_inner_texts() == ["France", "Netherlands", "United States"]

    page.fill("#question", "and only those from France?")
    page.press("#question", "Enter")
    second = page.locator(".turn").nth(1)
    second.locator(".turn-footer").wait_for()
    assert second.locator(".rewritten").inner_text() == "Interpreted as: How many singers are from France?"
    assert second.locator(".answer").inner_text() == "There are 4 matching singers."
    thread_id = page.evaluate("new URL(location).searchParams.get('thread')")
    assert thread_id

    page.set_viewport_size({"width": 1440, "height": 1480})
    page.evaluate("document.querySelector('.thread').scrollTop = 0")
    page.wait_for_timeout(300)  # Plotly resizes to the new viewport
    shot = Path(os.environ.get("ASKCHAIN_SCREENSHOT") or tmp_path / "screenshot.png")
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000

    page.reload()  # the thread comes back from the server
    page.locator(".turn").nth(1).wait_for()
    assert page.locator(".turn .question").all_inner_texts() == ["How many singers by country?", "and only those from France?"]
    assert page.locator(".turn").nth(1).locator(".rewritten").is_visible()

    assert not errors, errors
    assert all(url.startswith(base) or url.startswith("data:") for url in requests), [u for u in requests if not u.startswith(base)]
