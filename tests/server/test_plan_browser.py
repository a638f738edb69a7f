"""The web UI shows a question answered in steps: the plan, each step's stages, SQL and row count, then the last
step's rows and the answer (headless Chromium, scripted model)."""

from __future__ import annotations

import json

import pytest

from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app

pytestmark = pytest.mark.browser

STEPS = ["Which stadium held the most concerts?", "Which singers sang at the stadium found in step 1?"]


def direct(request, i):
    if "step 1" in request.values["question"]:
        return ("```sql\nSELECT DISTINCT s.Name FROM singer s JOIN singer_in_concert sc ON sc.Singer_ID = s.Singer_ID "
                "JOIN concert c ON c.concert_ID = sc.concert_ID WHERE c.Stadium_ID = '2' ORDER BY s.Name\n```")
    return "```sql\nSELECT Stadium_ID, count(*) AS concerts FROM concert GROUP BY Stadium_ID ORDER BY concerts DESC LIMIT 1\n```"


def test_the_plan_and_its_steps(open_ui, live_server, settings, script):
    model = ScriptedModel({**script, "direct": direct, "plan": json.dumps({"steps": STEPS})})
    pipeline = settings.with_overrides(pipeline={"method": "pipeline", "examples_k": 0, "value_retrieval": False})
    page, errors = open_ui(live_server(create_app(pipeline, model)))

    page.fill("#question", "For the stadium that held the most concerts, which singers sang there?")
    page.press("#question", "Enter")
    turn = page.locator(".turn").nth(0)
    turn.locator(".turn-footer").wait_for()
    steps = turn.locator(".plan .plan-step")
    assert steps.count() == 2 and steps.nth(0).locator("p").first.inner_text() == STEPS[0]
    assert "GROUP BY Stadium_ID" in steps.nth(0).locator("pre.sql").inner_text()
    assert "1 row" in steps.nth(0).inner_text() and "3 rows" in steps.nth(1).inner_text()
    labels = turn.locator(".stage.done .label").all_inner_texts()
    assert "Plan" in labels and "Answer step by step" in labels
    assert any(label.startswith("Step 1 · ") for label in labels) and any(label.startswith("Step 2 · ") for label in labels)
    assert turn.locator("table.results tbody tr").count() == 3  # the last step's rows answer the question
    assert "Answered in steps" in turn.locator(".answer").inner_text()
    level = turn.locator(".confidence .badge").inner_text()

    page.reload()  # the stored thread brings the plan, each step and the confidence back
    turn = page.locator(".turn").nth(0)
    turn.locator(".plan .plan-step.done").nth(1).wait_for()
    steps = turn.locator(".plan .plan-step")
    assert steps.count() == 2 and "GROUP BY Stadium_ID" in steps.nth(0).locator("pre.sql").inner_text()
    assert "1 row" in steps.nth(0).inner_text() and "3 rows" in steps.nth(1).inner_text()
    assert turn.locator(".confidence .badge").inner_text() == level
    assert turn.locator("table.results tbody tr").count() == 3
    assert not errors, errors
