import pytest

from askchain.answer.followup import HISTORY_TURNS, Turn, clean_rewrite, rewrite_followup
from askchain.llm.fake import ScriptedModel


def test_no_history_means_no_model_call():
    model = ScriptedModel(lambda request, i: "unused")
    assert rewrite_followup("How many singers?", [], model) == "How many singers?"
    assert model.requests == []


def test_rewrite_sees_recent_history_and_returns_the_clean_question():
    model = ScriptedModel(lambda request, i: 'Rewritten question: "What is the daily USDT transfer count?"\nBecause...')
    history = [Turn(f"question {i}", f"SELECT {i}", f"answer {i}") for i in range(HISTORY_TURNS + 2)]
    text = rewrite_followup("and only for USDT?", history, model)
    assert text == "What is the daily USDT transfer count?"
    prompt = model.requests[0].messages[-1][1]
    assert "Follow-up: and only for USDT?" in prompt
    assert f"question {HISTORY_TURNS + 1}" in prompt and "SELECT 2" in prompt
    assert "question 1\n" not in prompt  # older turns are left out


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("What is X?", "What is X?"),
        ("\n\n  Question: What is X?  \nextra", "What is X?"),
        ("`What is X?`", "What is X?"),
        ("", ""),
    ],
)
def test_clean_rewrite(reply, expected):
    assert clean_rewrite(reply) == expected


def test_empty_reply_keeps_the_original_question():
    model = ScriptedModel(lambda request, i: "   ")
    assert rewrite_followup("and for 2020?", [Turn("q", None, "a")], model) == "and for 2020?"
