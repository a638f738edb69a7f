"""A constant the question never called for is sent back: the question, an entity it names or a known constant's
words must account for each literal the domain watches. A known one's condition is dropped before validation."""

from __future__ import annotations

import pytest

from askchain.domains.ethereum.rules.grounding import drop_unasked_constants, ungrounded_literals, unused_question_constants
from askchain.semantic import Entry, Reading
from askchain.semantic.layer import GroundedLiterals, KnownLiteral

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
ZERO = "0x" + "0" * 40
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
OTHER = "0x" + "ab" * 20
RULES = GroundedLiterals(pattern="0x[0-9a-f]{8,}", known=(
    KnownLiteral(literal=TRANSFER, name="the Transfer event's topic0", terms=("transfer", "transfers")),
    KnownLiteral(literal=ZERO, name="the zero address", terms=("minted", "zero address")),
))
USDC_ENTITY = Reading(Entry(name="usdc", kind="entity", terms=("USDC",), definition=f"USDC: token_address = '{USDC}'"))
# a metric's example constant is what gets copied: it grounds nothing
EVENTS = Reading(Entry(name="events", kind="metric", terms=("events",),
                       definition=f"events: logs rows; Transfer = '{TRANSFER}'"))
TOPIC0 = "topics[SAFE_OFFSET(0)]"


@pytest.mark.parametrize("question, readings, sql, finding", [
    # the Transfer hash copied into a question about all events
    ("How many events did USDC emit yesterday?", [USDC_ENTITY, EVENTS],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' AND address = '{USDC}'",
     f"'{TRANSFER}' is the Transfer event's topic0, which the question does not ask about: drop the condition on it"),
    # called for by the question's words, or written in it
    ("How many USDC transfers were logged yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' AND address = '{USDC}'", None),
    (f"How many events with topic0 {TRANSFER.upper()} yesterday?", [],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}'", None),
    # an address nothing names, compared bare or padded to a word; the same one twice is one finding
    (f"How many events did {USDC} emit?", [],
     f"SELECT COUNT(*) FROM logs WHERE address = '{OTHER}' OR address = '{OTHER}'",
     f"'{OTHER}' is in neither the question nor what it names"),
    (f"How many tokens did {OTHER} receive?", [],
     f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(2)] = '0x{'0' * 24}{OTHER[2:]}'", None),
    ("How many NFTs were minted yesterday?", [],
     f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(1)] = '0x{'0' * 64}'", None),
    ("How many NFTs moved yesterday?", [],
     f"SELECT COUNT(*) FROM token_transfers WHERE from_address = '{ZERO}'",
     f"'{ZERO}' is the zero address, which the question does not ask about"),
    # a constant kept out is no filter on it
    ("How many addresses received NFTs yesterday?", [],
     f"SELECT COUNT(DISTINCT to_address) FROM token_transfers WHERE LOWER(to_address) != '{ZERO}'", None),
    ("How many addresses sent NFTs yesterday?", [],
     f"SELECT COUNT(DISTINCT from_address) FROM token_transfers WHERE from_address NOT IN ('{ZERO}', '{OTHER}')", None),
    # a constant inside a pattern is watched; one cut short from the question's is not the question's
    ("How many calls did USDC get yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM transactions WHERE to_address = '{USDC}' AND input LIKE '{TRANSFER[:10]}%'",
     f"'{TRANSFER[:10]}' is in neither the question nor what it names"),
    (f"How many events did {USDC} emit?", [], f"SELECT COUNT(*) FROM logs WHERE address = '{USDC[:30]}'",
     f"'{USDC[:30]}' is in neither"),
    # a word holding a token id is a number, not an address
    ("Who received the NFT with token id 1234?", [],
     f"SELECT topics[SAFE_OFFSET(2)] FROM logs WHERE topics[SAFE_OFFSET(3)] = '0x{'0' * 60}04d2'", None),
    # constants shorter than the pattern, and numbers, are not watched
    ("How many plain transfers yesterday?", [], "SELECT COUNT(*) FROM transactions WHERE input = '0x' AND gas > 21000",
     None),
    # unreadable: the other checks say why
    ("How many events yesterday?", [], f"SELECT COUNT(*) FROM logs WHERE address = '{OTHER}' AND", None),
])
def test_constants_the_question_does_not_call_for_are_sent_back(question, readings, sql, finding):
    found = ungrounded_literals(sql, "bigquery", RULES, question, readings)
    if finding is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(finding), found


@pytest.mark.parametrize("question, readings, sql, repaired", [
    # the copied Transfer hash dropped from WHERE's chain of ANDs, first, last or alone, in parentheses or not
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' AND address = '{USDC}'",
     f"SELECT COUNT(*) FROM logs WHERE address = '{USDC}'"),
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE address = '{USDC}' AND ({TOPIC0} = '{TRANSFER}') AND block_number > 5",
     f"SELECT COUNT(*) FROM logs WHERE address = '{USDC}' AND block_number > 5"),
    ("How many events were logged yesterday?", [],
     f"SELECT COUNT(*) FROM logs WHERE LOWER({TOPIC0}) IN ('{TRANSFER}')", "SELECT COUNT(*) FROM logs"),
    ("How many events did USDC emit?", [USDC_ENTITY],
     f"SELECT n FROM (SELECT COUNT(*) AS n FROM logs WHERE address = '{USDC}' AND {TOPIC0} = '{TRANSFER}')",
     f"SELECT n FROM (SELECT COUNT(*) AS n FROM logs WHERE address = '{USDC}')"),
    # called for, or only excluded: kept
    ("How many USDC transfers were logged yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' AND address = '{USDC}'", None),
    ("How many other events were logged yesterday?", [],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} != '{TRANSFER}'", None),
    # an unknown constant may be the question's own value mistyped: revision decides
    (f"How many events did {USDC} emit?", [], f"SELECT COUNT(*) FROM logs WHERE address = '{OTHER}'", None),
    # anywhere but WHERE's ANDs (OR, a count's condition, JOIN ON), or beside a constant the question gives: kept
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' OR address = '{USDC}'", None),
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNTIF({TOPIC0} = '{TRANSFER}') FROM logs WHERE address = '{USDC}'", None),
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs AS l JOIN tokens AS t ON t.address = l.address AND {TOPIC0} = '{TRANSFER}'", None),
    ("How many events did USDC emit yesterday?", [USDC_ENTITY],
     f"SELECT COUNT(*) FROM logs WHERE address IN ('{USDC}', '{ZERO}')", None),
    # unreadable: unchanged
    ("How many events yesterday?", [], f"SELECT COUNT(*) FROM logs WHERE {TOPIC0} = '{TRANSFER}' AND", None),
])
def test_conditions_on_known_constants_the_question_does_not_call_for_are_dropped(question, readings, sql, repaired):
    written, notes = drop_unasked_constants(sql, "bigquery", RULES, question, readings)
    if repaired is None:
        assert (written, notes) == (sql, [])
    else:
        assert written == repaired and len(notes) == 1 and notes[0].startswith("dropped ") and \
            "which the question does not ask about" in notes[0], notes


@pytest.mark.parametrize("question, sql, unused", [
    # the contract the question names, answered through a symbol many contracts share
    (f"Is the contract at {USDC} an ERC-20?", "SELECT is_erc20 FROM contracts c JOIN tokens t ON t.address = c.address "
     "WHERE t.symbol = 'USDC'", [USDC]),
    # used in another case, padded to a 32-byte word, inside a pattern
    (f"How many events did {USDC.upper()} emit?", f"SELECT COUNT(*) FROM logs WHERE address = '{USDC}'", []),
    (f"How many tokens did {OTHER} receive?",
     f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(2)] = '0x{'0' * 24}{OTHER[2:]}'", []),
    # written padded in the question, used bare (or padded) in the query
    (f"How many Transfer logs have topic 2 = 0x{'0' * 24}{OTHER[2:]}?",
     f"SELECT COUNT(*) FROM token_transfers WHERE to_address = '{OTHER}'", []),
    (f"How many Transfer logs have topic 2 = 0x{'0' * 24}{OTHER[2:]}?", "SELECT COUNT(*) FROM logs",
     [f"0x{'0' * 24}{OTHER[2:]}"]),
    ("How many ERC-20 transfer calls (input starting with 0xa9059cbb) yesterday?",
     "SELECT COUNT(*) FROM transactions WHERE input LIKE '0xa9059cbb%'", []),
    # one finding per constant, named as the question writes it
    (f"Transfers from {OTHER} to {USDC.upper()}, and back to {OTHER}?", "SELECT COUNT(*) FROM token_transfers",
     [OTHER, USDC.upper()]),
    # an example of what is asked for is no value to filter on
    ("The 5 most common method selectors (the first 4 bytes of input, e.g. 0xa9059cbb)?",
     "SELECT SUBSTR(input, 1, 10) AS selector, COUNT(*) AS n FROM transactions GROUP BY selector", []),
    ("Which selectors, such as 0x095ea7b3, were called most?", "SELECT SUBSTR(input, 1, 10) FROM transactions", []),
    # constants shorter than the pattern are not watched
    ("How many plain transfers (input 0x) yesterday?", "SELECT COUNT(*) FROM transactions WHERE gas = 21000", []),
])
def test_constants_the_question_writes_are_used(question, sql, unused):
    found = unused_question_constants(sql, RULES, question)
    assert found == [f"the question names '{constant}', but the query never uses it: filter on that constant itself, "
                     "as written (not on a name or symbol standing for it)" for constant in unused]
