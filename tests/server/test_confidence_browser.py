"""The web UI shows each answer's confidence as a badge, a low answer's alternative results, and an abstention as an
answer without SQL (headless Chromium, scripted model)."""

from __future__ import annotations

import pytest

from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app

pytestmark = pytest.mark.browser

SPLIT = ["SELECT count(*) FROM singer WHERE Country = 'France'", "SELECT count(*) FROM singer",
         "SELECT count(*) FROM stadium"]


def test_badges_alternatives_and_an_abstention(open_ui, live_server, settings, script):
    model = ScriptedModel({**script, "direct": lambda request, i: f"```sql\n{SPLIT[i % 3]}\n```",
                           "place_words": '{"ticket price": "none"}'})
    pipeline = settings.with_overrides(pipeline={"method": "pipeline", "examples_k": 0, "value_retrieval": False,
                                                 "semantic_layer": False, "abstention": "llm"})
    page, errors = open_ui(live_server(create_app(pipeline, model)))

    page.fill("#question", "How many singers are from France?")
    page.press("#question", "Enter")
    first = page.locator(".turn").nth(0)
    first.locator(".turn-footer").wait_for()
    assert first.locator(".badge").inner_text() == "low confidence"
    assert "2 of 6 samples agree on the result" in first.locator(".confidence").inner_text()
    alternatives = first.locator("details.alternative")
    assert alternatives.count() == 2
    alternatives.nth(0).locator("summary").click()
    assert "FROM" in alternatives.nth(0).locator("pre.sql").inner_text()
    assert alternatives.nth(0).locator("table.results tbody tr").count() == 1

    page.click("#new-thread")  # a new question, not a follow-up to rewrite
    page.fill("#question", "What is the average ticket price of the concerts held in each stadium?")
    page.press("#question", "Enter")
    second = page.locator(".turn").nth(0)
    second.locator(".turn-footer").wait_for()
    assert second.locator(".badge").inner_text() == "not in this data"
    assert second.locator(".answer").inner_text().startswith("This data has no ticket price")
    assert not second.locator(".sql-panel").is_visible() and not second.locator(".error").is_visible()
    assert not errors, errors
