"""Rules of side-by-side decoding that need no model."""

import pytest

from askchain.llm.llamacpp_batch import LOOP_TOKENS, LookupDrafts, looping

LINE = list(range(100, 100 + LOOP_TOKENS))


@pytest.mark.parametrize("tokens, expected", [
    (LINE * 3, True),                                   # the same 16 tokens a third time in a row: a loop
    ([1, 2, 3] + (LINE + [7]) * 3, True),               # a longer unit three times in a row
    ([1, 2, 3] + [4, 5, 6] * 16, True),                 # a short unit, over and over
    (LINE * 2, False),                                  # twice is a legitimate repetition (e.g. INTERSECT)
    # an expression used three times with other text between (SUM(x) AS volume, SUM(x) - LAG(SUM(x))): no loop
    ([1, 2, 3] + LINE + [7] + LINE + [8, 9] + LINE, False),
    ([1, 2, 3] + LINE * 2 + [7] + LINE, False),
    (list(range(200)), False),
    (LINE * 2 + LINE[:-1] + [999], False),              # the third copy differs in its last token
    # a hex literal is a token per digit: the zero address as a topic is 64 zeros in a row, not a loop
    (LINE + [15] * 64, False),
    (LINE + [15, 16] * 32, False),                      # a repeated 2-token unit as long
    (LINE + [15] * 67, True),                           # longer than any literal: stuck on one token
])
def test_a_sample_repeating_itself_is_looping(tokens, expected):
    assert looping(tokens) is expected


PROMPT = [5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 12, 13]


@pytest.mark.parametrize("own, limit, expected", [
    ([], 4, []),                          # the prompt's last 3 tokens (7, 12, 13) occur nowhere before
    ([5, 6, 7], 4, [12, 13]),             # the latest occurrence of 5 6 7 in the prompt, up to its end
    ([5, 6, 7], 1, [12]),                 # at most `limit` tokens
    ([1, 8, 9, 10], 3, [11, 5, 6]),
    ([8, 9, 10, 1, 2, 8, 9, 10], 3, [1, 2, 8]),  # the sample's own earlier text comes first
    ([5, 6, 7], 0, []),
    ([40, 41, 42], 4, []),
])
def test_prompt_lookup_drafts_what_followed_the_last_tokens(own, limit, expected):
    drafts = LookupDrafts(PROMPT, limit)
    drafts.extend(own)
    assert drafts.draft(room=100) == expected


def test_forks_share_the_prompt_index_but_not_their_text():
    base = LookupDrafts(PROMPT, 2)
    a, b = base.fork(), base.fork()
    a.extend([20, 21, 22, 23, 20, 21, 22])
    b.extend([5, 6, 7])
    assert a.draft(2) == [23, 20] and b.draft(2) == [12, 13]
    assert a.prompt_index is b.prompt_index


def test_a_sequence_drafts_less_after_misses_and_more_after_hits():
    drafts = LookupDrafts(PROMPT, 8)
    drafts.extend([1, 8, 9, 10])
    assert drafts.draft(room=100) == [11, 5, 6, 7, 12, 13] and drafts.draft(room=2) == [11, 5]
    drafts.judge(accepted=0, drafted=6)
    drafts.judge(accepted=0, drafted=4)
    assert drafts.limit == 2 and drafts.draft(room=100) == [11, 5]
    drafts.judge(accepted=1, drafted=2)
    assert drafts.limit == 2  # some kept, some not: unchanged
    drafts.judge(accepted=2, drafted=2)
    drafts.judge(accepted=4, drafted=4)
    drafts.judge(accepted=8, drafted=8)
    assert drafts.limit == 8  # doubled back, never above the maximum
