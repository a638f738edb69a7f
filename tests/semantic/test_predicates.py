"""Each tree predicate holds on the queries it names and not on their look-alikes in the text (a LIMIT's 100 is no
percentage's, a join's `number - 1` no change); a predicate the library lacks, or an argument it does not take,
is an error when it is built."""

from __future__ import annotations

import pytest
import sqlglot

from askchain.semantic.predicates import MATCHERS, PredicateError, build, query_or_none, validate

T = "FROM transactions"


def holds(spec, sql: str, **values: str) -> bool:
    return build(spec, values)(sqlglot.parse_one(sql, read="bigquery"))


#: (predicate, a query it holds on, a query it does not), every predicate of the library at least once.
CASES = [
    ({"column": "max_(priority_)?fee_per_gas"}, f"SELECT AVG(t.max_fee_per_gas) {T} t",
     f"SELECT AVG(receipt_effective_gas_price) AS max_fee_per_gas {T}"),  # an alias is no column
    ({"table": "tokens"}, "SELECT symbol FROM `bigquery-public-data.crypto_ethereum.tokens`",
     "SELECT COUNT(*) AS tokens FROM token_transfers"),
    ({"call": ["APPROX_QUANTILES", "MEDIAN"]}, f"SELECT APPROX_QUANTILES(gas_price, 100)[OFFSET(50)] {T}",
     f"SELECT AVG(gas_price) AS approx_quantiles {T}"),
    ({"call": "ARRAY_LENGTH"}, "SELECT ARRAY_SIZE(function_sighashes) FROM contracts",  # the same function
     "SELECT COUNT(*) FROM contracts"),
    ({"call": {"names": ["SUBSTR", "RIGHT"], "of": {"element": {"of": "topics"}}}},
     "SELECT RIGHT(topics[SAFE_OFFSET(2)], 40) FROM logs", "SELECT SUBSTR(input, 1, 10) FROM transactions"),
    ({"string": "Sat(urday)?|Sun(day)?"}, "SELECT COUNT(*) FROM blocks WHERE FORMAT_DATE('%A', DATE(timestamp)) = 'Sunday'",
     "SELECT COUNT(*) FROM blocks WHERE miner = 'Sundays'"),
    ({"number": 100}, f"SELECT 100.0 * COUNTIF(receipt_status = 0) / COUNT(*) {T}",
     f"SELECT from_address, COUNT(*) {T} GROUP BY from_address ORDER BY 2 DESC LIMIT 100"),
    ({"power_of_ten": {"exponent": 18}}, f"SELECT SUM(value) / POWER(10, 18) {T}", f"SELECT SUM(gas_price) / 1e9 {T}"),
    ({"power_of_ten": {"exponent": 18}}, f"SELECT SUM(value) / 1000000000000000000 {T}",
     f"SELECT SUM(gas_price) / 1e9 AS gwei_not_1e18 {T}"),
    ({"power_of_ten": {"least": 6}}, "SELECT SUM(SAFE_CAST(value AS BIGNUMERIC)) / 1e6 FROM token_transfers",
     "SELECT SUM(SAFE_CAST(value AS BIGNUMERIC)) / 100 FROM token_transfers"),
    ({"element": {"of": "topics", "at": 0}}, "SELECT COUNT(*) FROM logs WHERE topics[ORDINAL(1)] = '0x01'",
     "SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(1)] = '0x01'"),
    ({"part": "DAYOFWEEK"}, "SELECT EXTRACT(DAYOFWEEK FROM timestamp) AS d, COUNT(*) FROM blocks GROUP BY d",
     "SELECT DATE(timestamp) AS dayofweek, COUNT(*) FROM blocks GROUP BY dayofweek"),
    ({"interval": {"n": "{n}", "unit": "DAY"}},
     "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)",
     "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 WEEK)"),
    ({"interval": {"n": 1}}, "SELECT COUNT(*) FROM blocks WHERE timestamp >= CURRENT_TIMESTAMP() - INTERVAL 1 HOUR",
     "SELECT COUNT(*) FROM blocks WHERE number > 1"),
    ({"days_ago": "{n}"}, "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = CURRENT_DATE() - INTERVAL 7 DAY",
     "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 70 DAY)"),
    ({"before_today": {}}, "SELECT COUNT(*) FROM blocks WHERE CAST(CURRENT_DATE() AS TIMESTAMP) > timestamp",
     "SELECT COUNT(*) FROM blocks WHERE timestamp < CURRENT_TIMESTAMP()"),
    ({"before_today": {}}, "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) <= DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)",
     "SELECT COUNT(*) FROM blocks WHERE timestamp < TIMESTAMP_TRUNC(CURRENT_TIMESTAMP(), HOUR)"),
    ({"limit": "{n}"}, f"SELECT from_address {T} ORDER BY value DESC LIMIT 7",
     f"SELECT from_address {T} WHERE nonce = 7 LIMIT 70"),
    ({"grouped": {"windows": True}},
     "SELECT * FROM blocks QUALIFY ROW_NUMBER() OVER (PARTITION BY DATE(timestamp) ORDER BY gas_used DESC) = 1",
     "SELECT SUM(gas_used) OVER (ORDER BY number) FROM blocks"),
    ({"grouped": {}}, "SELECT miner, COUNT(*) FROM blocks GROUP BY miner",
     "SELECT * FROM blocks QUALIFY ROW_NUMBER() OVER (PARTITION BY miner ORDER BY number) = 1"),
    ({"group_key": {"any_of": [{"call": "DATE"}, {"column": "day|date"}]}},
     "SELECT miner, COUNT(*) FROM blocks GROUP BY miner, DATE(timestamp)",
     "SELECT DATE(timestamp) AS d, COUNT(*) FROM blocks WHERE DATE(timestamp) > '2024-01-01' GROUP BY miner"),
    ({"group_key": {"mentions": ["week", "month"]}}, "SELECT COUNT(*) FROM blocks GROUP BY DATE_TRUNC(DATE(timestamp), WEEK(MONDAY))",
     "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) >= DATE_TRUNC(CURRENT_DATE(), MONTH) GROUP BY miner"),
    ({"shown": {"element": {"of": "topics", "at": [1, 2]}}},
     "SELECT topics[SAFE_OFFSET(2)] AS receiver, COUNT(*) FROM logs GROUP BY receiver",
     "SELECT COUNT(*) FROM logs WHERE topics[SAFE_OFFSET(2)] = '0x01'"),
    ({"selected": {"subtraction": {}}}, "SELECT 100 * (b - a) / a FROM (SELECT 1 AS a, 2 AS b)",
     "SELECT 100 * b.gas_used / a.gas_used FROM blocks b JOIN blocks a ON a.number = b.number - 1"),
    ({"compared": {"this": {"column": "input"}, "with": {"string": "0x[0-9a-f]{{8}}"}}},
     f"SELECT COUNT(*) {T} WHERE '0xa9059cbb' = input", f"SELECT COUNT(*) {T} WHERE STARTS_WITH(input, '0xa9059cbb')"),
    ({"compared": {"this": {"part": "DAYOFWEEK"}, "with": {"number": 0}}},
     "SELECT COUNT(*) FROM blocks WHERE EXTRACT(DAYOFWEEK FROM timestamp) IN (6, 0)",
     "SELECT COUNT(*) FROM blocks WHERE EXTRACT(DAYOFWEEK FROM timestamp) IN (1, 7) AND gas_used > 0"),
    ({"in_list": [1, 7]}, "SELECT EXTRACT(DAYOFWEEK FROM timestamp) IN (7, 1) AS weekend FROM blocks",
     "SELECT EXTRACT(DAYOFWEEK FROM timestamp) IN (1, 6, 7) AS weekend FROM blocks"),
    ({"null_test": {"column": "trace_address", "negated": True}}, "SELECT COUNT(*) FROM traces WHERE NOT (trace_address IS NULL)",
     "SELECT COUNT(*) FROM traces WHERE trace_address IS NULL"),
    ({"null_test": {"column": "trace_address"}}, "SELECT COUNT(*) FROM traces WHERE trace_address IS NULL",
     "SELECT COUNT(*) FROM traces WHERE trace_address = ''"),
    ({"division": {}}, f"SELECT IEEE_DIVIDE(COUNTIF(receipt_status = 0), COUNT(*)) {T}",
     f"SELECT COUNTIF(receipt_status = 0) {T} /* failed / all */"),
    ({"division": {"of": {"column": "value"}, "by": {"power_of_ten": {"least": 6}}}},
     "SELECT SUM(CAST(tt.value AS FLOAT64)) / POWER(10, 6) FROM token_transfers tt",
     "SELECT SUM(SAFE_CAST(tt.value AS BIGNUMERIC) / POWER(10, CAST(tk.decimals AS INT64))) FROM token_transfers tt "
     "JOIN tokens tk ON tk.address = tt.token_address"),
    ({"product": {"factor": {"number": 100}, "unless": {"power_of_ten": {"least": 6}}}},
     f"SELECT COUNTIF(receipt_status = 0) * 100 / COUNT(*) {T}",
     "SELECT SUM(IF(eth_balance > eth_balance * 100 * 1e18, 1, 0)) FROM balances"),  # 100 ETH in wei
    ({"subtraction": {}}, "SELECT a.gas_used - b.gas_used FROM blocks a, blocks b",
     "SELECT COUNT(*) FROM blocks WHERE timestamp > CURRENT_TIMESTAMP() - INTERVAL 1 HOUR AND gas_used > -1"),
    ({"concatenated": {"first": {"string": "0x"}}}, "SELECT '0x' || SUBSTR(topics[SAFE_OFFSET(2)], 27) || '' FROM logs",
     "SELECT CONCAT(SUBSTR(topics[SAFE_OFFSET(2)], 27), '0x') FROM logs"),
    ({"formatted": "%a"}, "SELECT FORMAT_TIMESTAMP('%A', timestamp) AS d FROM blocks",
     "SELECT FORMAT_DATE('%Y-%m-%d', DATE(timestamp)) AS d FROM blocks"),
    ({"mentions": ["week"]}, "SELECT EXTRACT(WEEK FROM timestamp) FROM blocks", "SELECT weekly FROM blocks"),
    ({"unnest": {}}, "SELECT (SELECT COUNT(*) FROM UNNEST(function_sighashes)) FROM contracts",
     "SELECT COUNT(*) FROM contracts WHERE '0xa9059cbb' IN UNNEST(function_sighashes)"),
    ({"any_of": [{"limit": 1}, {"number": 2}]}, "SELECT 2", "SELECT 1"),
    ({"all_of": [{"compared": {"this": {"call": "CURRENT_DATE"}}}, {"interval": {}}]},
     "SELECT COUNTIF(DATE(timestamp) = CURRENT_DATE()), COUNTIF(DATE(timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)) "
     "FROM blocks", "SELECT COUNT(*) FROM blocks WHERE DATE(timestamp) = CURRENT_DATE()"),
    ({"all_of": [{"table": "blocks"}, {"none_of": [{"table": "transactions"}]}]}, "SELECT COUNT(*) FROM blocks",
     "SELECT COUNT(*) FROM transactions t JOIN blocks b ON b.number = t.block_number"),
    ({"intervals": {"distinct": 2, "unit": "DAY"}},
     "SELECT 1 FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 8 DAY) "
     "QUALIFY DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)",
     "SELECT 1 FROM blocks WHERE DATE(timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) "
     "AND timestamp < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)"),
]


@pytest.mark.parametrize("spec, right, wrong", CASES, ids=[f"{next(iter(c[0]))}-{i}" for i, c in enumerate(CASES)])
def test_a_predicate_holds_on_what_it_names_and_not_on_its_look_alikes(spec, right, wrong):
    assert holds(spec, right, n="7")
    assert not holds(spec, wrong, n="7")


def test_every_predicate_of_the_library_has_a_case():
    named = {name for spec, _, _ in CASES for name in _names(spec)}
    assert set(MATCHERS) | {"any_of", "all_of", "none_of", "intervals"} <= named


def _names(spec) -> set[str]:
    if isinstance(spec, dict):
        return set(spec) | set().union(*map(_names, spec.values()))
    return set().union(*map(_names, spec)) if isinstance(spec, list) else set()


def test_placeholders_are_filled_from_the_question_in_every_string():
    spec = {"limit": "{n}"}
    assert holds(spec, "SELECT 1 LIMIT 30", n="30") and not holds(spec, "SELECT 1 LIMIT 30", n="3")


@pytest.mark.parametrize("spec, error", [
    ({"lmit": 10}, "unknown predicate 'lmit'"),
    ({"limit": "ten"}, "limit takes a whole number"),
    ({"limit": 1, "number": 2}, "a mapping of one name"),
    ({"interval": {"n": 1, "units": "DAY"}}, r"interval takes no \['units'\]"),
    ({"element": {"at": 0}}, r"element needs \['of'\]"),
    ({"column": "(unclosed"}, "bad pattern"),
    ({"compared": {"this": {"intervals": {"distinct": 2}}}}, "holds on a whole query, not on a node"),
    ({"power_of_ten": {}}, "either exponent or least"),
    ({"grouped": {"windows": "yes"}}, "true or false"),
    ({"string": "0x[0-9a-f]{8}"}, "cannot be filled"),  # a quantifier's braces written once
    ({"any_of": []}, "takes a list"),
])
def test_a_bad_predicate_is_an_error_when_built(spec, error):
    with pytest.raises(PredicateError, match=error):
        validate(spec)


def test_a_command_sqlglot_fell_back_to_is_no_tree_to_test():
    assert query_or_none(sqlglot.parse_one("SELECT 1")) is not None
    assert query_or_none(sqlglot.exp.Command(this="SHOW")) is None and query_or_none(None) is None
