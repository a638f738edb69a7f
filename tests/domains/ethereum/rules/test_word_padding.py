"""An address compared with an element of a 32-byte word column is padded to the word, where it is written."""

import pytest

from askchain.domains.ethereum.rules.word_padding import pad_addresses_in_words, unpadded_address

ZERO = "0x" + "0" * 40
USDC = "0xA0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
WORD = "0x000000000000000000000000a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"


@pytest.mark.parametrize("sql, padded, notes", [
    (f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(1)] = '{ZERO}'",
     f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(1)] = '0x{'0' * 64}'",
     [f"{ZERO} compared with topics[SAFE_OFFSET(1)] padded to 32 bytes"]),
    # either side, lower-cased into the word; the contract's own address (not a topic) stays as written
    (f"SELECT * FROM logs AS l WHERE address = '{USDC}' AND '{USDC}' = l.topics[OFFSET(2)]",
     f"SELECT * FROM logs AS l WHERE address = '{USDC}' AND '{WORD}' = l.topics[OFFSET(2)]",
     [f"{USDC} compared with l.topics[OFFSET(2)] padded to 32 bytes"]),
    (f"SELECT * FROM logs WHERE topics[OFFSET(1)] IN ('{USDC}', 'x') OR topics[OFFSET(2)] <> '{USDC}'",
     f"SELECT * FROM logs WHERE topics[OFFSET(1)] IN ('{WORD}', 'x') OR topics[OFFSET(2)] <> '{WORD}'",
     [f"{USDC} compared with topics[OFFSET(1)] padded to 32 bytes",
      f"{USDC} compared with topics[OFFSET(2)] padded to 32 bytes"]),
    (f"SELECT COUNT(*) FROM logs WHERE '{USDC}' IN UNNEST(topics)",
     f"SELECT COUNT(*) FROM logs WHERE '{WORD}' IN UNNEST(topics)",
     [f"{USDC} compared with UNNEST(topics) padded to 32 bytes"]),
    # case folds on either side
    (f"SELECT COUNT(*) FROM logs WHERE LOWER(topics[SAFE_OFFSET(2)]) = LOWER('{USDC}')",
     f"SELECT COUNT(*) FROM logs WHERE LOWER(topics[SAFE_OFFSET(2)]) = LOWER('{WORD}')",
     [f"{USDC} compared with topics[SAFE_OFFSET(2)] padded to 32 bytes"]),
    (f"SELECT COUNT(*) FROM logs WHERE UPPER(topics[OFFSET(1)]) IN (UPPER('{USDC}'), '{ZERO}')",
     f"SELECT COUNT(*) FROM logs WHERE UPPER(topics[OFFSET(1)]) IN (UPPER('{WORD}'), '0x{'0' * 64}')",
     [f"{USDC} compared with topics[OFFSET(1)] padded to 32 bytes",
      f"{ZERO} compared with topics[OFFSET(1)] padded to 32 bytes"]),
])
def test_an_address_compared_with_a_word_is_padded(sql, padded, notes):
    assert pad_addresses_in_words(sql, "bigquery", ["logs.topics"]) == (padded, notes)


@pytest.mark.parametrize("sql", [
    f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(1)] = '{WORD}'",  # a word already
    "SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(0)] = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'",
    f"SELECT COUNT(*) FROM logs WHERE address = '{USDC}'",  # not a word column
    f"SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(2)] LIKE '%{USDC[2:]}'",  # a pattern, right as written
    f"SELECT COUNT(*) FROM traces WHERE trace_address[SAFE_OFFSET(0)] = '{USDC}'",  # another array
    f"SELECT COUNT(*) FROM traces WHERE '{USDC}' IN UNNEST(trace_address)",
    "SELEC topics[1] = '0x1'",  # unreadable: validation reports it
])
def test_what_is_no_address_compared_with_a_word_is_left_as_written(sql):
    assert pad_addresses_in_words(sql, "bigquery", ["logs.topics"]) == (sql, [])


def test_without_word_columns_nothing_is_parsed():
    assert pad_addresses_in_words("SELEC", "bigquery", []) == ("SELEC", [])


@pytest.mark.parametrize("literal, address", [
    ("0x" + "0" * 24 + "Ab" * 20, "0x" + "ab" * 20),
    ("0x" + "0" * 64, "0x" + "0" * 40),  # the zero address
    ("0x" + "0" * 60 + "04d2", None),  # token id 1234
    ("0x" + "ab" * 20, None),  # not a word
    ("0x" + "1" * 64, None),  # a hash
])
def test_a_word_gives_back_the_address_it_holds(literal, address):
    assert unpadded_address(literal) == address
