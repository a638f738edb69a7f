"""The semantic layer picks the entries a question calls for, longest phrase first, and fills captured numbers."""

from __future__ import annotations

import pytest

from askchain.errors import ConfigError
from askchain.semantic import Entry, Layer, load_layer
from askchain.semantic.layer import Check

LAYER = Layer([
    Entry(name="eth", kind="metric", terms=("ETH",), definition="ETH = wei / 1e18"),
    Entry(name="burned", kind="metric", terms=("ETH burned", "burned"), definition="burned = base fee * gas used"),
    Entry(name="days", kind="convention", patterns=(r"\blast\s+(?P<n>\d+)\s+days\b",),
          definition="last {n} days: DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY)", reading="last {n} days = {n} full days"),
    Entry(name="share", kind="convention", terms=("share",), definition="a fraction 0-1", reading="share = 0-1",
          yields_to=("percent",)),
    Entry(name="percent", kind="convention", terms=("in percent",), definition="0-100"),
    Entry(name="usdc", kind="entity", terms=("USDC", "USD Coin"), definition="USDC = 0xa0b8"),
])


@pytest.mark.parametrize("question, names", [
    ("How much ETH burned in the last 7 days?", ["burned", "days"]),  # "ETH burned" wins over "ETH"
    ("How much ETH was sent?", ["eth"]),
    ("What share of USD Coin transfers failed?", ["share", "usdc"]),
    ("usdc holders", ["usdc"]),  # case-insensitive
    ("shares of ETH-based tokens", []),  # whole words only: not "share" in "shares", not "ETH" in "ETH-based"
    ("How many blocks?", []),
    ("What share of blocks, in percent?", ["percent"]),  # a share asked in percent is a percentage
    ("USD-Coin transfers", ["usdc"]),  # a hyphen joins a term's words as a space does
    ("ETH burned-in fees", ["eth"]),  # but a term is not the start of a hyphenated compound
])
def test_entries_are_matched_as_whole_phrases_longest_first(question, names):
    assert [r.entry.name for r in LAYER.match(question)] == names


def test_patterns_fill_the_numbers_they_capture():
    (reading,) = LAYER.match("transfers in the last 30 days")
    assert reading.definition == "last 30 days: DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY)"
    assert reading.reading == "last 30 days = 30 full days"


def test_a_count_may_be_written_in_words_and_is_read_as_digits():
    layer = Layer([Entry(name="days", kind="convention", patterns=(r"\bpast\s+(?P<n>{count})\s+days\b",),
                         definition="INTERVAL {n} DAY")])
    assert [r.definition for r in layer.match("blocks over the past three days")] == ["INTERVAL 3 DAY"]
    assert [r.definition for r in layer.match("blocks over the past 3 days")] == ["INTERVAL 3 DAY"]
    assert layer.match("blocks over the past few days") == []


#: One shorthand entry; a layer listing it as F and as f has two of one name.
TWICE = "  - call: 'F({n})'\n    sql: '{n}'\n    note: n\n"


@pytest.mark.parametrize("text, error", [
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n    colour: red\n", "semantic layer .* is invalid"),
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n    patterns: ['(unclosed']\n", "bad pattern"),
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n    yields_to: [y]\n",
     r"entry x yields to unknown entries \['y'\]"),
    ("units:\n  - name: wei\n    columns: [t.v]\n    shown_as: v / 1e18\n    asked_for: '(wei'\n",
     "unit wei has a bad pattern"),
    ("column_aliases:\n  blocks: [block_timestamp]\n", "semantic layer .* is invalid"),  # a list, not alias: column
    ("word_columns: logs.topics\n", "word_columns must be a list of table.column"),  # one name, not a list
    ("show_ranking_measure: yes please\n", "show_ranking_measure must be true or false"),
    # the sql's parameters differ from the call's
    ("shorthands:\n  - call: 'LAST_DAYS({column}, {n})'\n    sql: 'DATE({column}) >= {days}'\n    note: n\n",
     r"shorthand 'LAST_DAYS\(\{column\}, \{n\}\)' must be NAME\(...\) whose sql"),
    ("shorthands:\n  - call: 'LAST DAYS({column})'\n    sql: 'DATE({column})'\n    note: n\n", "must be NAME"),
    ("grounded_literals:\n  pattern: '0x[0-9a-f'\n", "grounded_literals has a bad pattern"),
    ("grounded_literals:\n  pattern: '0x'\n  known:\n    - literal: '0x00'\n      name: zero\n",
     "semantic layer .* is invalid"),  # a known literal without the words that call for it
    ("shorthands:\n  - call: 'F({table})'\n    sql: 'DATE({table})'\n    note: n\n", r"of \['column', 'n'\]"),
    ("shorthands:\n" + TWICE + TWICE.replace("F(", "f("), "two shorthands share a name"),
    # a window's condition on no column, or with no check to say when it is due
    ("entries:\n  - name: x\n    kind: convention\n    definition: d\n    condition: 'DATE(ts) = CURRENT_DATE()'\n"
     "    checks: [{requires: 'CURRENT', message: m}]\n", "entry x's condition must be on {column}"),
    ("entries:\n  - name: x\n    kind: convention\n    definition: d\n    condition: 'DATE({column}) = CURRENT_DATE()'\n",
     "entry x's condition must be on {column} and the entry must have the checks"),
    # a check's predicate the library lacks, or with an argument it does not take, names its entry
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n    checks: [{requires_tree: {lmit: 5}, message: m}]\n",
     "entry x has a bad tree predicate .*unknown predicate 'lmit'"),
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n"
     "    checks: [{forbids_tree: {limit: {n: 5}}, message: m}]\n", "entry x has a bad tree predicate"),
    # a quantifier's braces written once: the pattern compiles as written and breaks once filled
    ("entries:\n  - name: x\n    kind: metric\n    definition: d\n    checks: [{forbids: '0x[0-9a-f]{40}', message: m}]\n",
     "entry x has a check pattern .* that does not compile once filled"),
])
def test_a_broken_layer_file_is_a_one_line_error(tmp_path, text, error):
    bad = tmp_path / "layer.yaml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=error):
        load_layer(bad)


def test_column_aliases_are_read_by_table_in_lower_case(tmp_path):
    layer_file = tmp_path / "layer.yaml"
    layer_file.write_text("column_aliases:\n  Blocks: {Block_Timestamp: timestamp}\n")
    assert load_layer(layer_file).column_aliases == {"blocks": {"block_timestamp": "timestamp"}}


def test_word_columns_the_ranking_rule_and_shorthands_are_read_and_off_by_default(tmp_path):
    layer_file = tmp_path / "layer.yaml"
    layer_file.write_text("entries: []\n")
    assert (load_layer(layer_file).word_columns, load_layer(layer_file).show_ranking_measure) == ((), False)
    assert load_layer(layer_file).shorthands == ()
    layer_file.write_text("shorthands:\n  - call: 'Day_Ago({column}, {n})'\n    sql: 'DATE({column}) = {n}'\n    note: n\n")
    (shorthand,) = load_layer(layer_file).shorthands
    assert (shorthand.name, shorthand.parameters) == ("DAY_AGO", {"column", "n"})
    layer_file.write_text("word_columns: [logs.topics]\nshow_ranking_measure: true\n")
    assert (load_layer(layer_file).word_columns, load_layer(layer_file).show_ranking_measure) == (("logs.topics",), True)


def test_grounded_literals_are_read_with_the_words_that_call_for_each_and_off_by_default(tmp_path):
    layer_file = tmp_path / "layer.yaml"
    layer_file.write_text("entries: []\n")
    assert load_layer(layer_file).grounded_literals is None
    layer_file.write_text("grounded_literals:\n  pattern: '0x[0-9a-f]{8,}'\n  known:\n    - literal: '0xA9059CBB'\n"
                          "      name: the transfer selector\n      terms: [transfer, transfers]\n")
    rules = load_layer(layer_file).grounded_literals
    selector = rules.known_as("0xa9059cbb")
    assert selector.name == "the transfer selector"
    assert selector.called_for("How many token transfers?")
    assert not selector.called_for("How many functions does it expose?")
    assert rules.known_as("0x095ea7b3") is None  # not a known literal: nothing calls for it


def test_units_say_how_to_show_their_columns_unless_the_question_asks_for_the_unit(tmp_path):
    layer_file = tmp_path / "layer.yaml"
    layer_file.write_text("units:\n  - name: wei\n    columns: [Balances.ETH_balance, transactions.value]\n"
                          "    shown_as: 'show ETH as {column} / 1e18'\n    asked_for: '\\bwei\\b'\n")
    layer = load_layer(layer_file)
    wei = layer.units[0]
    assert layer.units_by_column == {"balances.eth_balance": wei, "transactions.value": wei}
    assert not wei.asked_in("What is the ETH balance of 0xab?")
    assert not wei.asked_in("Average gas price in gwei?")  # gwei is not wei
    assert wei.how_shown("value") == "wei: show ETH as value / 1e18" and wei.least_meant is None
    assert wei.asked_in("What is the balance of 0xab in wei?")
    assert LAYER.units_by_column == {}  # a layer without units


TOP = Entry(name="top", kind="convention", patterns=(r"\btop\s+(?P<n>\d+)",), definition="the top {n}",
            checks=(Check(requires_tree={"limit": "{n}"}, message="end with LIMIT {n}"),
                    Check(requires=r"\bminer\b", message="by miner"),
                    Check(applies=r"\bminer\b", forbids_tree={"call": "MEDIAN"}, message="no median by miner")))


def test_checks_on_the_tree_read_the_query_as_parsed_beside_those_on_its_text():
    (reading,) = Layer([TOP]).match("the top 5 miners")
    assert reading.findings("SELECT miner FROM blocks LIMIT 5", "bigquery") == []
    assert reading.findings("SELECT miner FROM blocks WHERE n = 5 LIMIT 50", "bigquery") == ["end with LIMIT 5"]
    assert reading.findings("SELECT miner, MEDIAN(gas_used) FROM blocks GROUP BY miner LIMIT 5", "bigquery") == \
        ["no median by miner"]
    assert reading.findings("SELECT MEDIAN(gas_used) FROM blocks LIMIT 5", "bigquery") == ["by miner"]
    assert hash(TOP) == hash(TOP.model_copy())  # an entry with checks on the tree hashes as any other


def test_a_query_that_cannot_be_parsed_is_held_to_the_checks_on_its_text_alone():
    (reading,) = Layer([TOP]).match("the top 5 miners")
    assert reading.findings("SELECT MEDIAN(gas_used) FROM blocks WHERE", "bigquery") == ["by miner"]
    assert reading.findings("SELECT miner FROM blocks", tree=lambda: None) == []  # the caller's parse: none
