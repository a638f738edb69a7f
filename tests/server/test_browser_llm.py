"""The README's picture, for real: `askchain serve` with the embedded model and the default pipeline over the local
Ethereum dataset, driven from headless Chromium: a question, its stages, SQL, table, chart, answer, a follow-up.

ASKCHAIN_SCREENSHOT=docs/screenshot.png pytest tests/server/test_browser_llm.py  refreshes docs/screenshot.png.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.llm, pytest.mark.browser, pytest.mark.timeout(2400)]

QUESTION = "Which 10 miners mined the most blocks in the last 30 days, and how many blocks each?"
FOLLOW_UP = "and in the last 7 days?"
ANSWER_WAIT_MS = 900_000  # a pipeline question on the 5k-token Ethereum schema takes minutes on two CPU cores


def finished(turn) -> None:
    """Wait for the turn's footer (done) or its error, and fail on the error."""
    turn.locator(".turn-footer:not([hidden]), .error:not([hidden])").first.wait_for(timeout=ANSWER_WAIT_MS)
    assert turn.locator(".error:not([hidden])").count() == 0, turn.inner_text()


def test_pipeline_on_ethereum_in_the_browser(browser, serve_command, tmp_path):
    base = serve_command(env={"ASKCHAIN_PIPELINE__METHOD": "pipeline", "ASKCHAIN_LLM__MODEL": "qwen2.5-coder-1.5b"})
    # the first request for the dataset builds it (a year of simulated mainnet activity, ~1 min): before the page
    assert httpx.get(f"{base}/schema/ethereum", timeout=600).status_code == 200
    page = browser.new_page(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base)
    page.wait_for_selector(".schema details.table")
    assert "blocks" in page.inner_text("#schema") and page.locator("#method").input_value() == "pipeline"

    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    first = page.locator(".turn").nth(0)
    finished(first)
    done_stages = first.locator(".stage.done .label").all_inner_texts()
    for label in ("Find examples", "Link schema", "Retrieve values", "Build context", "Draft · direct samples", "Select", "Answer"):
        assert label in done_stages, done_stages
    assert "miner" in first.locator("pre.sql").first.inner_text().lower()
    assert first.locator("table.results tbody tr").count() == 10
    first.locator(".chart .main-svg").first.wait_for()  # a bar chart of the top 10
    answer = first.locator(".answer").inner_text()
    table = first.locator("table.results").inner_text()
    assert answer and any(number in table for number in re.findall(r"\d[\d,]*", answer)), answer

    page.fill("#question", FOLLOW_UP)
    page.press("#question", "Enter")
    second = page.locator(".turn").nth(1)
    finished(second)
    rewritten = second.locator(".rewritten").inner_text()
    assert "7" in rewritten and "miner" in rewritten.lower(), rewritten
    assert 0 < second.locator("table.results tbody tr").count() <= 10

    page.evaluate("document.querySelector('.thread').scrollTop = 0")
    page.set_viewport_size({"width": 1440, "height": 1600})
    page.wait_for_timeout(300)  # Plotly resizes to the new viewport
    shot = Path(os.environ.get("ASKCHAIN_SCREENSHOT") or tmp_path / "screenshot.png")
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert not errors, errors


def test_a_planned_question_in_the_browser(open_ui, serve_command):
    """Issue 17's planner with the embedded model in the web UI: the plan, each step's SQL, the last step's rows. Free
    SQL only: over Ethereum the semantic generator otherwise answers with a plan the layer writes as one query."""
    base = serve_command(env={"ASKCHAIN_PIPELINE__METHOD": "pipeline", "ASKCHAIN_LLM__MODEL": "qwen2.5-coder-1.5b",
                              "ASKCHAIN_PIPELINE__GENERATORS__SEMANTIC__ENABLED": "false"})
    assert httpx.get(f"{base}/schema/ethereum", timeout=600).status_code == 200
    page, errors = open_ui(base, viewport={"width": 1440, "height": 1000})
    page.fill("#question", "For the fee recipient that produced the most blocks yesterday, how many transactions "
                           "did its blocks hold yesterday?")
    page.press("#question", "Enter")
    turn = page.locator(".turn").nth(0)
    finished(turn)
    steps = turn.locator(".plan .plan-step")
    assert 2 <= steps.count() <= 3
    for n in range(steps.count()):
        assert steps.nth(n).locator("pre.sql").count() == 1, steps.nth(n).inner_text()
    assert any(label.startswith("Step 2 · ") for label in turn.locator(".stage.done .label").all_inner_texts())
    assert turn.locator("table.results tbody tr").count() >= 1
    assert "Answered in steps" in turn.locator(".answer").inner_text()
    assert not errors, errors
