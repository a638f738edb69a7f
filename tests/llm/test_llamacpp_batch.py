"""Rules of side-by-side decoding that need no model."""

import pytest

from askchain.llm.llamacpp_batch import LOOP_TOKENS, looping

LINE = list(range(100, 100 + LOOP_TOKENS))


@pytest.mark.parametrize("tokens, expected", [
    (LINE * 3, True),                                   # the same 16 tokens a third time: a loop
    ([1, 2, 3] + LINE * 2 + [7] + LINE, True),
    (LINE * 2, False),                                  # twice is a legitimate repetition (e.g. INTERSECT)
    (list(range(200)), False),
    (LINE * 2 + LINE[:-1] + [999], False),              # the third copy differs in its last token
])
def test_a_sample_repeating_itself_is_looping(tokens, expected):
    assert looping(tokens) is expected
