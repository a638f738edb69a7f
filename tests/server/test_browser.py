"""The web UI in headless Chromium (Playwright), with the scripted model: ask, follow up, sort, screenshot.

The README's picture comes from the same UI with the embedded model on Ethereum (test_browser_llm.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from askchain.llm.fake import ScriptedModel
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
    assert first.locator(".answer ol > li").all_inner_texts() == [
        "France — 4 singers", "United States — 1 singer", "Netherlands — 1 singer"]
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
    assert second.locator(".answer").inner_text() == "4 singers are from France."
    assert second.locator(".answer strong").inner_text() == "4"
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


def test_answer_markdown_renders_as_a_list_and_html_in_it_stays_text(browser, live_server, settings, script):
    """A top-N answer is a list, not one paragraph; an answer's HTML (a model may write any) is shown, never run."""

    def direct(request, i):
        if "stadiums" in request.values["question"]:
            return "```sql\nSELECT name, capacity FROM stadium ORDER BY capacity DESC\n```"
        return "```sql\nSELECT name, song_name FROM singer WHERE country = 'France'\n```"

    # no digits: the summary must pass the check that its numbers come from the rows
    hostile = ('Claire <b>sings</b> <img src=x onerror="window.injected = \'img\'">'
               '<script>window.injected = \'script\'</script> [more](javascript:window.injected=\'link\') '
               '![p](https://images.example/p.png)')
    model = ScriptedModel({**script, "direct": direct, "summarize": hostile})
    base = live_server(create_app(settings, model))
    page = browser.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base)
    page.wait_for_selector(".schema details.table")

    page.fill("#question", "Which stadiums hold the most people?")
    page.press("#question", "Enter")
    first = page.locator(".turn").nth(0)
    first.locator(".turn-footer").wait_for()
    items = first.locator(".answer ol > li")
    assert items.count() == 9  # every stadium, ranked
    assert items.nth(0).inner_text() == "Crown Stadium — capacity: 51,000"
    assert items.nth(0).locator("strong").inner_text() == "Crown Stadium"

    page.fill("#question", "What do French singers sing?")  # two text columns: the model's words
    page.press("#question", "Enter")
    second = page.locator(".turn").nth(1)
    second.locator(".turn-footer").wait_for()
    answer = second.locator(".answer")
    assert answer.inner_text().startswith("Claire <b>sings</b> <img src=x onerror=")
    assert answer.locator("b, img, script, a").count() == 0
    assert page.evaluate("window.injected") is None
    assert not errors, errors
    assert all(url.startswith(base) for url in requests), [u for u in requests if not u.startswith(base)]
