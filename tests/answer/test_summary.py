import datetime as dt
from decimal import Decimal

import pytest

from askchain.answer.summary import PROMPT_ROWS, summarize, templated_answer, unsupported_numbers, whole_sentences
from askchain.llm.fake import ScriptedModel


@pytest.mark.parametrize(
    "text, sources, expected",
    [
        ("There are 6 singers.", [6], []),
        ("There are 7 singers.", [6], ["7"]),
        ("Total volume was 1,234.57 ETH.", [1234.5678], []),
        ("Total volume was 1,234.6 ETH.", [Decimal("1234.5678")], []),
        ("Total volume was 1,235 ETH.", [1234.5678], []),
        ("Total volume was 1,234.5 ETH.", [1234.5678], ["1,234.5"]),
        ("About 25% of blocks.", [0.25], ["25"]),
        ("The peak was on 2021-05-12.", [dt.date(2021, 5, 12)], []),
        ("In 2019 the count fell by 12.", ["2019-01-01", -12], []),
        ("The top 3 singers are listed.", ["top 3 singers?"], []),
        ("Token USDT-v2 leads.", [], []),  # digits inside words are names, not numbers
        ("Ratio 0.333.", [1 / 3], []),
        ("No numbers at all.", [], []),
    ],
)
def test_unsupported_numbers(text, sources, expected):
    assert unsupported_numbers(text, sources) == expected


@pytest.mark.parametrize(
    "columns, rows, expected",
    [
        (["count(*)"], [[6]], "The answer is 6 (count(*))."),
        (["name", "age"], [["Joe", 52]], "The result is one row: name = Joe, age = 52."),
        (["name", "age"], [["Joe", 52], ["Tribal King", 25]], "The query returned 2 rows; the first is name = Joe, age = 52."),
        (["avg"], [[2.5000001]], "The answer is 2.5 (avg)."),
        (["x"], [[None]], "The answer is NULL (x)."),
    ],
)
def test_templated_answer(columns, rows, expected):
    assert templated_answer(columns, rows) == expected


def _model(reply):
    return ScriptedModel(lambda request, i: reply)


@pytest.mark.parametrize(
    "reply, rows, truncated, error, expected",
    [
        ("There are 6 singers.", [[6]], False, None, "There are 6 singers."),
        # an invented number falls back to the template
        ("There are 60 singers.", [[6]], False, None, "The answer is 6 (n)."),
        ("", [[6]], False, None, "The answer is 6 (n)."),
        ("There are\n\n6 singers.", [[6]], False, None, "There are 6 singers."),
        (
            "The first singer is 6.",
            [[6], [7]],
            True,
            None,
            "The first singer is 6. Only the first 2 rows were kept (the row limit was reached), so the answer may be incomplete.",
        ),
        ("There are 6 singers.", [[6]], False, "revision gave up", "There are 6 singers. Caution: revision gave up."),
    ],
)
def test_summarize(reply, rows, truncated, error, expected):
    assert summarize("How many singers?", "SELECT count(*) FROM singer", ["n"], rows, _model(reply), truncated=truncated, error=error) == expected


@pytest.mark.parametrize(
    "error, expected",
    [(None, "The query ran but returned no rows."), ("no such table: x", "I could not answer this question: no such table: x")],
)
def test_summarize_without_rows_makes_no_model_call(error, expected):
    model = _model("unused")
    assert summarize("q", "SELECT 1", ["n"], [], model, error=error) == expected
    assert model.requests == []


def test_prompt_carries_capped_rows_and_numbers_beyond_the_cap_are_rejected():
    rows = [[f"name{i}", 1000 + i] for i in range(PROMPT_ROWS + 5)]
    model = _model(f"The last value is {1000 + PROMPT_ROWS + 2}.")
    text = summarize("List values", "SELECT * FROM t", ["name", "value"], rows, model)
    prompt = model.requests[0].messages[-1][1]
    assert f"name{PROMPT_ROWS - 1} | {1000 + PROMPT_ROWS - 1}" in prompt
    assert f"name{PROMPT_ROWS}" not in prompt
    assert f"first {PROMPT_ROWS} shown" in prompt
    assert text.startswith(f"The query returned {PROMPT_ROWS + 5} rows")


@pytest.mark.parametrize("text, expected", [
    ("Alice has 3. Bob has 2. Carol", "Alice has 3. Bob has 2."),  # cut by the token limit
    ("Alice has 3.", "Alice has 3."),
    ("The answer is 3 (three)", "The answer is 3 (three)"),  # one unfinished sentence is kept rather than lost
    ("", ""),
])
def test_whole_sentences(text, expected):
    assert whole_sentences(text) == expected
