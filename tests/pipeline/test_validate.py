"""Static validation, table-driven, on the fixture database (Spider's concert_singer schema), and the rule that
nothing a candidate holds can crash validation, execution or the question."""

import re

import pytest

from askchain.db.schema import Column, Schema, Table
from askchain.db.sqlite import SQLiteEngine
from askchain.generation.candidates import Candidate
from askchain.pipeline.revise import execute_candidates
from askchain.pipeline.validate import validate_sql
from askchain.rules import analysis
from askchain.rules.base import Findings
from askchain.rules.checks.text_against_numbers import TextAgainstNumbers
from askchain.semantic.layer import Unit

PREFIX = "bigquery-public-data.crypto_ethereum."


@pytest.fixture(scope="module")
def schema(concert_db) -> Schema:
    """The fixture database's schema as the SQLite engine introspects it (declared types, keys, foreign keys)."""
    return SQLiteEngine(str(concert_db)).schema()


@pytest.fixture(scope="module", params=[PREFIX, None], ids=["qualified-names", "short-names"])
def ethereum(request) -> Schema:
    """A slice of crypto_ethereum with GoogleSQL types, nested ones included, its tables named as prompts show them:
    BigQuery's qualified names, or short ones (`db.short_table_names`); queries may write either."""
    prefix = request.param
    return Schema([
        Table("blocks", [Column("number", "INT64"), Column("timestamp", "TIMESTAMP"), Column("miner", "STRING"),
                         Column("withdrawals", "ARRAY<STRUCT<index INT64, validator_index INT64, address STRING, "
                                               "amount STRING>>")], query_name=prefix and prefix + "blocks"),
        Table("transactions", [Column("hash", "STRING"), Column("block_timestamp", "TIMESTAMP"),
                               Column("value", "NUMERIC")], query_name=prefix and prefix + "transactions"),
    ], "bigquery")


def internal_failures(findings: Findings) -> list[str]:
    return [w for w in findings.warnings if w.startswith("validation step")]


# The queries of the crash reported in issue 14: any expression or word on the left of IN, columns inside IN.
@pytest.mark.parametrize("sql,expected", [
    ("SELECT Name FROM singer WHERE LOWER(Country) IN ('france', 'netherlands')", None),
    ("SELECT Name FROM singer WHERE 'France' IN (Country, Name)", None),
    ("SELECT Name FROM singer WHERE UPPER(Name) NOT IN ('JOE', 'ANN')", None),
    ("SELECT Name FROM singer WHERE Age + 1 IN ('a', 'b')", None),  # an expression, not a column: left alone
    ("SELECT Name FROM singer WHERE LOWER(Name) IN (SELECT LOWER(Name) FROM stadium)", None),
    ("SELECT Name FROM singer WHERE Country IN (Name, 'France')", None),
    ("SELECT Name FROM singer WHERE 'France' IN (Country, Age)", "singer.Age holds numbers (INT), not text like 'France'"),
    ("SELECT Name FROM singer WHERE Age NOT IN ('young', 'old')", "singer.Age holds numbers (INT), not text like 'young'"),
    ("SELECT s.Name FROM singer AS s WHERE s.Age IN (LOWER('X'), 'old')", "singer.Age holds numbers (INT), not text like 'old'"),
    ("SELECT 'x' IN (1, 2) FROM singer", None),
])
def test_in_with_expressions_and_words_on_either_side(schema, sql, expected):
    findings = validate_sql(sql, schema)
    assert not internal_failures(findings), findings
    if expected is None:
        assert findings.ok, findings
    else:
        assert expected in findings.errors, findings


@pytest.mark.parametrize("sql,expected", [
    ("SELECT count(*) FROM singer", None),
    ("SELECT nam FROM singer", "Column 'nam' does not exist"),
    ("SELECT * FROM nowhere", "table nowhere does not exist"),
    ("SELEC 1", "syntax error"),
    ("WITH s AS (SELECT Name FROM singer) SELECT Name FROM s", None),
    ("SELECT count(*) AS french, count(*) AS dutch FROM singer WHERE Country = 'France'",
     "columns french and dutch both compute COUNT(*)"),
    ("SELECT Singer_ID, Name, Singer_ID FROM singer", None),  # unnamed repeats, as some gold SQL has
    ("SELECT count(*) AS n, count(*) AS N FROM singer", None),
    ("SELECT count(*), count(*) FROM singer", None),  # unnamed: qualification's _col_0/_col_1 are not the author's
    # a number column compared with words: a query that runs and finds nothing (or everything)
    ("SELECT Name FROM stadium WHERE Capacity = 'Glebe Park'", "stadium.Capacity holds numbers (INT), not text like 'Glebe Park'"),
    ("SELECT Stadium_ID FROM stadium WHERE Stadium_ID = 'x1'", "filter on concert.Stadium_ID instead (join concert)"),
    ("SELECT count(*) FROM stadium AS s WHERE 'big' <> s.Capacity", "stadium.Capacity holds numbers"),
    ("SELECT Name FROM singer WHERE Age IN (30, 'thirty')", "singer.Age holds numbers"),
    ("SELECT Name FROM stadium WHERE Stadium_ID IN (SELECT Stadium_ID FROM concert WHERE Stadium_ID = 'Glebe')",
     None),  # concert.Stadium_ID is text in this database
    ("SELECT Name FROM singer WHERE Age = '32' OR Age > '1e1'", None),  # numbers written as text compare fine
    ("SELECT Name FROM singer WHERE Name = 'Joe' OR Age > 30", None),
    ("WITH c AS (SELECT Capacity FROM stadium) SELECT Capacity FROM c WHERE Capacity = 'big'", None),  # a CTE's column
])
def test_validation_errors(schema, sql, expected):
    findings = validate_sql(sql, schema)
    if expected is None:
        assert findings.ok, findings
    else:
        assert any(expected in e for e in findings.errors), findings


@pytest.mark.parametrize("sql,expected", [
    ("SELECT nam FROM singer", "Column 'nam' does not exist in singer; did you mean Name"),
    ("SELECT NaMe2 FROM singer", "Column 'NaMe2' does not exist in singer"),  # spelled as written, not normalised
    ("SELECT T1.Stadium_ID FROM concert AS T1 JOIN singer AS T2 ON T1.concert_ID = T2.Singer_ID WHERE T2.Capacity > 1",
     "Column 'Capacity' does not exist in singer"),
    ("SELECT Capacity FROM singer", "(Capacity is a column of stadium)"),
    ("SELECT count(*) FROM singers", "table singers does not exist; did you mean singer"),
    # a column some table has, that the query cannot read: the fix named
    ("SELECT Name FROM singer AS s JOIN stadium AS t ON s.Singer_ID = t.Stadium_ID",
     "Column 'Name' is ambiguous: s and t both have it; qualify it (s.Name or t.Name)"),
    ("SELECT singer.Name FROM concert", "Column 'singer.Name' cannot be read: singer is not in the FROM of that query; "
     "JOIN singer to read it"),
    ("SELECT T9.Name FROM singer", "Column 'T9.Name' cannot be read: that query has no table or alias named T9"),
    ("WITH c AS (SELECT Singer_ID FROM singer) SELECT Country FROM c",
     "Column 'Country' cannot be read: c does not select it; add it to the SELECT of c"),
    ("SELECT x.Country FROM (SELECT Singer_ID FROM singer) AS x",
     "Column 'Country' cannot be read: x does not select it; add it to the SELECT of x"),
    # a subquery without a name; one that selects the column only inside an expression, or groups its rows
    ("SELECT Country FROM (SELECT Singer_ID FROM singer)",
     "Column 'Country' cannot be read: the subquery in FROM does not select it; add it to the SELECT of the subquery in "
     "FROM"),
    ("SELECT Country, AVG(n) FROM (SELECT UPPER(Country) AS place, COUNT(*) AS n FROM singer GROUP BY place) GROUP BY 1",
     "Column 'Country' cannot be read: the subquery in FROM selects it only as UPPER(Country) AS place; read place"),
    ("WITH c AS (SELECT Age, COUNT(*) AS n FROM singer GROUP BY Age) SELECT Country FROM c",
     "Column 'Country' cannot be read: c does not select it; add it to the SELECT (and GROUP BY) of c"),
    ("SELECT Country FROM (SELECT COUNT(DISTINCT Country) AS n FROM singer)",  # an aggregate is no other name for it
     "Column 'Country' cannot be read: the subquery in FROM does not select it; add it to the SELECT of the subquery "
     "in FROM"),
    ("SELECT singer.Name FROM singer AS s", "Column 'singer.Name' cannot be read: that query reads singer as s; write "
     "s.Name"),
    ("SELECT T1.Name FROM stadium AS T1 JOIN concert AS T2 ON T1.Stadium_ID = T2.Stadium_ID WHERE T1.Stadium_ID = 'x1'",
     "stadium.Stadium_ID holds numbers (INT), not text like 'x1'; filter on concert.Stadium_ID instead"),
])
def test_validation_names_the_closest_columns_and_tables(schema, sql, expected):
    assert expected in validate_sql(sql, schema).summary()


def test_validation_points_a_qualified_bigquery_column_to_its_table(ethereum):
    """The small model's most common Ethereum mistake: `block_timestamp` (every other table) in blocks."""
    summary = validate_sql(
        "SELECT miner, COUNT(*) FROM `bigquery-public-data.crypto_ethereum.blocks` "
        "WHERE block_timestamp >= TIMESTAMP '2026-01-01' GROUP BY miner", ethereum,
    ).summary()
    assert summary == "Column 'block_timestamp' does not exist in blocks; did you mean timestamp?"
    summary = validate_sql(
        "WITH top AS (SELECT miner FROM `bigquery-public-data.crypto_ethereum.blocks` WHERE block_timestamp > TIMESTAMP '2026-01-01') "
        "SELECT t.hash FROM `bigquery-public-data.crypto_ethereum.transactions` AS t WHERE t.block_timestamp > TIMESTAMP '2026-01-01'",
        ethereum,
    ).summary()
    assert summary == "Column 'block_timestamp' does not exist in blocks; did you mean timestamp?", "only the CTE lacks it"


@pytest.mark.parametrize("sql,expected", [
    # The fields of an UNNESTed ARRAY<STRUCT<...>> are columns: qualification sees them through the column's type.
    ("SELECT SUM(CAST(amount AS NUMERIC)) FROM `bigquery-public-data.crypto_ethereum.blocks`, UNNEST(withdrawals)", None),
    ("SELECT w.amount FROM `bigquery-public-data.crypto_ethereum.blocks` AS b, UNNEST(b.withdrawals) AS w", None),
    ("SELECT amout FROM `bigquery-public-data.crypto_ethereum.blocks`, UNNEST(withdrawals)", "Column 'amout' does not exist"),
    ("SELECT hash FROM `bigquery-public-data.crypto_ethereum.transactions` WHERE value = 'lots'",
     "transactions.value holds numbers (NUMERIC), not text like 'lots'"),
    ("SELECT miner FROM `bigquery-public-data.crypto_ethereum.blocks` WHERE number IN (1, 'latest')",
     "blocks.number holds numbers (INT64), not text like 'latest'"),
    ("SELECT miner FROM `bigquery-public-data.crypto_ethereum.blocks` WHERE LOWER(miner) IN ('0xab', '0xcd')", None),
    ("SELECT w.amount FROM blocks AS b, UNNEST(b.withdrawals) AS w", None),
    ("SELECT hash FROM transactions WHERE value = 'lots'", "transactions.value holds numbers (NUMERIC), not text like 'lots'"),
    ("SELECT t.hash FROM transactions AS t JOIN `bigquery-public-data.crypto_ethereum.blocks` AS b ON b.number = t.nonce",
     "Column 'nonce' does not exist in transactions"),
])
def test_googlesql_types_as_sqlglot_reads_them(ethereum, sql, expected):
    findings = validate_sql(sql, ethereum)
    assert not internal_failures(findings), findings
    if expected is None:
        assert findings.ok, findings
    else:
        assert any(expected in e for e in findings.errors), findings


ARRAY_FINDING = "contracts.function_sighashes is an array (ARRAY<STRING>), not one value: test an element with " \
    "'x' IN UNNEST(function_sighashes), count its elements with ARRAY_LENGTH(function_sighashes), or UNNEST it"


@pytest.mark.parametrize("sql,expected", [
    # what the 1.5B model wrote for the Ethereum test split's sighash questions
    ("SELECT COUNT(*) FROM contracts WHERE function_sighashes = '0xa9059cbb'", ARRAY_FINDING),
    ("SELECT COUNT(DISTINCT function_sighashes) FROM contracts WHERE address = '0xbc'", ARRAY_FINDING),
    ("SELECT COUNT(*) FROM contracts WHERE function_sighashes LIKE '%0x42842e0e%'", ARRAY_FINDING),
    ("SELECT COUNT(*) FROM contracts WHERE function_sighashes IN ('0xa9059cbb')", ARRAY_FINDING),
    ("SELECT c.address FROM contracts AS c WHERE c.function_sighashes <> '0x'", ARRAY_FINDING),
    # read as text: what it wrote for "how many Transfer events had 4 topics?"
    ("SELECT COUNT(CASE WHEN LENGTH(SUBSTRING(function_sighashes, 1, 1)) = 0 THEN 1 END) FROM contracts", ARRAY_FINDING),
    ("SELECT UPPER(function_sighashes) FROM contracts", ARRAY_FINDING),
    ("SELECT LOWER(function_sighashes[SAFE_OFFSET(0)]), LENGTH(address) FROM contracts", None),
    # elements reached through UNNEST, an offset or ARRAY_LENGTH are values
    ("SELECT COUNT(*) FROM contracts WHERE '0xa9059cbb' IN UNNEST(function_sighashes)", None),
    ("SELECT AVG(ARRAY_LENGTH(function_sighashes)) FROM contracts", None),
    ("SELECT COUNT(*) FROM contracts AS c, UNNEST(c.function_sighashes) AS f WHERE f = '0xa9059cbb'", None),
    ("SELECT function_sighashes[SAFE_OFFSET(0)] FROM contracts WHERE function_sighashes[SAFE_OFFSET(0)] = '0xa9'", None),
    ("SELECT address FROM contracts WHERE address = '0xbc'", None),
])
def test_an_array_column_used_as_one_value_is_sent_back(sql, expected):
    schema = Schema([Table("contracts", [Column("address", "STRING"), Column("function_sighashes", "ARRAY<STRING>")])],
                    "bigquery")
    findings = validate_sql(sql, schema)
    assert not internal_failures(findings), findings
    assert findings.errors == ([expected] if expected else []), findings


FAILED = "receipt_status = 0"


@pytest.mark.parametrize("sql,share", [
    # what the 1.5B model wrote for "what percentage of yesterday's events were Transfer events?"
    ("SELECT CAST(COUNTIF(topics[SAFE_OFFSET(0)] = '0xdd') AS NUMERIC) * 100 / COUNT(*) AS pct FROM logs "
     "WHERE DATE(block_timestamp) = CURRENT_DATE() AND topics[SAFE_OFFSET(0)] = '0xdd'",
     "CAST(COUNTIF(topics[SAFE_OFFSET(0)] = '0xdd') AS NUMERIC) * 100 / COUNT(*)"),
    (f"SELECT SAFE_DIVIDE(COUNTIF({FAILED}), COUNT(*)) FROM transactions WHERE ({FAILED})",
     f"SAFE_DIVIDE(COUNTIF({FAILED}), COUNT(*))"),
    (f"SELECT IEEE_DIVIDE(COUNTIF({FAILED}), COUNT(*)) FROM transactions WHERE {FAILED}",
     f"IEEE_DIVIDE(COUNTIF({FAILED}), COUNT(*))"),
    (f"SELECT SUM(IF({FAILED}, value, 0)) / SUM(value) FROM transactions WHERE {FAILED}",
     f"SUM(IF({FAILED}, value, 0)) / SUM(value)"),
    (f"SELECT transaction_type, SUM(CASE WHEN {FAILED} THEN 1 ELSE 0 END) * 1.0 / COUNT(*) FROM transactions "
     f"WHERE {FAILED} GROUP BY transaction_type", f"SUM(CASE WHEN {FAILED} THEN 1 ELSE 0 END) * 1.0 / COUNT(*)"),
    # the condition qualified on one side only; a share as an average
    (f"SELECT AVG(IF(t.{FAILED}, 1, 0)) FROM transactions AS t WHERE {FAILED}", f"AVG(IF(t.{FAILED}, 1, 0))"),
    # a condition of several parts WHERE keeps each of (a test of NOT NULL aside where no row is NULL: a compared
    # column, an inner join's key), `x = TRUE` as `x`, COUNT(1 or NULL)
    (f"SELECT COUNTIF(value IS NOT NULL AND value > 0 AND transaction_type = 2) / COUNT(*) FROM transactions "
     f"WHERE transaction_type = 2 AND (value > 0)",
     "COUNTIF(NOT value IS NULL AND value > 0 AND transaction_type = 2) / COUNT(*)"),
    ("SELECT COUNTIF(t.value IS NOT NULL AND k.is_erc721) / COUNT(*) FROM transactions AS t JOIN tokens AS k "
     "ON k.is_erc721 = t.value WHERE k.is_erc721",
     "COUNTIF(NOT t.value IS NULL AND k.is_erc721) / COUNT(*)"),
    # a NOT NULL test the rows may fail is a share of its own (transactions that are no contract creation), and a
    # condition on another table's column of the same name
    (f"SELECT COUNTIF(value IS NOT NULL AND {FAILED}) / COUNT(*) FROM transactions WHERE {FAILED}", None),
    (f"SELECT COUNTIF(a.{FAILED}) / COUNT(*) FROM transactions AS a JOIN transactions AS b ON a.value = b.value "
     f"WHERE b.{FAILED}", None),
    ("SELECT COUNT(CASE WHEN t.is_erc721 THEN 1 END) * 1.0 / COUNT(*) FROM tokens AS t WHERE t.is_erc721 = TRUE",
     "COUNT(CASE WHEN t.is_erc721 THEN 1 END) * 1.0 / COUNT(*)"),
    (f"SELECT COUNTIF({FAILED} AND transaction_type = 2) / COUNT(*) FROM transactions WHERE {FAILED}", None),
    # the share of all rows, a count that is only redundant, and amounts that are no share are fine
    ("SELECT COUNTIF(topics[SAFE_OFFSET(0)] = '0xdd') / COUNT(*) FROM logs WHERE DATE(block_timestamp) = CURRENT_DATE()",
     None),
    (f"SELECT COUNTIF(transaction_type = 2) / COUNT(*) FROM transactions WHERE {FAILED}", None),
    (f"SELECT COUNTIF({FAILED}) FROM transactions WHERE {FAILED}", None),
    (f"SELECT SUM(IF({FAILED}, value, 0)) / COUNT(*) FROM transactions WHERE {FAILED}", None),
    (f"SELECT AVG(CASE WHEN {FAILED} THEN value END) FROM transactions WHERE {FAILED}", None),
    (f"SELECT (SELECT COUNTIF({FAILED}) FROM transactions) / COUNT(*) FROM transactions WHERE {FAILED}", None),
    # the condition kept by the CTE or subquery the share reads, passed on under its own name
    (f"WITH f AS (SELECT t.value, t.receipt_status FROM transactions AS t WHERE t.{FAILED}) "
     f"SELECT SAFE_DIVIDE(COUNTIF(f.{FAILED}), COUNT(*)) FROM f", f"SAFE_DIVIDE(COUNTIF(f.{FAILED}), COUNT(*))"),
    (f"WITH f AS (SELECT * FROM transactions WHERE {FAILED}) SELECT COUNTIF({FAILED}) / COUNT(*) FROM f",
     f"COUNTIF({FAILED}) / COUNT(*)"),
    (f"SELECT COUNTIF({FAILED}) / COUNT(*) FROM (SELECT receipt_status FROM transactions WHERE {FAILED})",
     f"COUNTIF({FAILED}) / COUNT(*)"),
    # renamed on the way, or the CTE joined to other rows: not the same rows
    (f"WITH f AS (SELECT receipt_status AS s, value AS receipt_status FROM transactions WHERE {FAILED}) "
     f"SELECT COUNTIF({FAILED}) / COUNT(*) FROM f", None),
    (f"WITH f AS (SELECT receipt_status FROM transactions WHERE {FAILED}) SELECT COUNTIF(f.{FAILED}) / COUNT(*) "
     "FROM transactions AS t LEFT JOIN f ON f.receipt_status = t.receipt_status", None),
])
def test_a_share_of_the_rows_the_filter_keeps_is_sent_back(sql, share):
    """A share whose condition is also in WHERE is always 100 %: it runs and looks like an answer."""
    schema = Schema([
        Table("logs", [Column("topics", "ARRAY<STRING>"), Column("block_timestamp", "TIMESTAMP")]),
        Table("transactions", [Column("value", "NUMERIC"), Column("receipt_status", "INT64"),
                               Column("transaction_type", "INT64")]),
        Table("tokens", [Column("is_erc721", "BOOL")]),
    ], "bigquery")
    findings = validate_sql(sql, schema)
    assert not internal_failures(findings), findings
    assert [e.split(" is always")[0] for e in findings.errors] == ([share] if share else []), findings
    if share:
        assert "is always 100 % of the rows" in findings.errors[0]
        assert re.search("out of (the )?WHERE", findings.errors[0])


def test_a_share_of_a_filtered_cte_names_the_where_to_change():
    schema = Schema([Table("transactions", [Column("receipt_status", "INT64")])], "bigquery")
    findings = validate_sql(f"WITH failed AS (SELECT receipt_status FROM transactions WHERE {FAILED}) "
                            f"SELECT COUNTIF({FAILED}) / COUNT(*) FROM failed", schema)
    assert f"the WHERE of failed keeps only rows with {FAILED}; take {FAILED} out of the WHERE of failed" in \
        findings.summary()


@pytest.mark.parametrize("sql, finding", [
    ("SELECT SAFE_DIVIDE(COUNTIF(receipt_status = 0), 1) FROM transactions",
     "SAFE_DIVIDE(COUNTIF(receipt_status = 0), 1) divides by 1"),
    ("SELECT COUNT(*) / 1 FROM transactions", "COUNT(*) / 1 divides by 1"),
    ("SELECT IEEE_DIVIDE(SUM(value), (1)) FROM transactions", "IEEE_DIVIDE(SUM(value), (1)) divides by 1"),
    ("SELECT SUM(value) / 1e18, COUNT(*) / 10, ROUND(AVG(value), 1) FROM transactions", None),
    # a real division of integers in SQLite and Postgres, and a quotient divided again
    ("SELECT COUNT(*) / 1.0 FROM transactions", None),
    ("SELECT SUM(value) / 1 / COUNT(*) FROM transactions", None),
    ("SELECT COUNTIF(receipt_status = 0) / COUNT(*) FROM transactions", None),
])
def test_a_division_by_one_is_sent_back(sql, finding):
    """`x / 1` is x: a share written without its whole shows a count where a fraction was asked."""
    schema = Schema([Table("transactions", [Column("value", "NUMERIC"), Column("receipt_status", "INT64")])], "bigquery")
    errors = validate_sql(sql, schema).errors
    assert [e.split(", which")[0] for e in errors] == ([finding] if finding else []), errors


@pytest.mark.parametrize("condition, reading", [
    ("is_erc20 OR is_erc721 AND day = 1", "is_erc20 OR (is_erc721 AND day = 1)"),
    ("day = 1 AND is_erc20 OR is_erc721", "(day = 1 AND is_erc20) OR is_erc721"),
    ("(is_erc20 OR is_erc721) AND day = 1", None),
    ("is_erc20 OR (is_erc721 AND day = 1)", None),
    # two alternatives, each an AND: the idiom
    ("is_erc20 AND day = 1 OR is_erc721 AND day = 2", None),
    ("is_erc20 OR is_erc721 OR day = 1", None),
])
def test_an_or_beside_an_unparenthesized_and_is_sent_back(condition, reading):
    """`x OR y AND z` holds z for y only: a time window after an OR of two kinds leaves the other kind unfiltered."""
    schema = Schema([Table("contracts", [Column("is_erc20", "BOOL"), Column("is_erc721", "BOOL"),
                                         Column("day", "INT64")])], "bigquery")
    errors = validate_sql(f"SELECT COUNT(*) FROM contracts WHERE {condition}", schema).errors
    assert errors == ([f"{condition} reads as {reading} (AND binds before OR): put the alternatives in parentheses, "
                       "(x OR y) AND z, so the other conditions hold for every alternative"] if reading else []), errors


TRACES = Schema([Table("traces", [Column("trace_address", "STRING", examples=["0", "1", "1,0"]),
                                   Column("to_address", "STRING", examples=["0x68b3465833fb72a70ecdf485e0e4c7bd8665fc45"]),
                                   Column("value", "NUMERIC", examples=[0, 27094235000000000]),
                                   Column("input", "STRING", examples=["0x"]),
                                   Column("call_type", "STRING")])], "bigquery")
SHAPE_FINDING = ("traces.trace_address holds values like '0', '1', '1,0', never a hex string: compare a hex string "
                 "with to_address, input")
ADDRESS = "'0x0000a26b00c1f0df003000390027140000faa719'"


@pytest.mark.parametrize("condition, finding", [
    # what the 1.5B model wrote for "how much ETH did 0x0000a26b… receive through internal calls"
    (f"trace_address = {ADDRESS}", SHAPE_FINDING),
    (f"{ADDRESS} = trace_address", SHAPE_FINDING),
    (f"trace_address IN ({ADDRESS}, '0x00')", SHAPE_FINDING),
    ("trace_address LIKE '0x0000%'", SHAPE_FINDING),
    (f"to_address = {ADDRESS}", None),
    # '0x', the empty call data, is a hex string too
    ("input LIKE '0xa9059cbb%'", None),
    ("trace_address = '0,1'", None),
    # a column without example values is not judged
    ("call_type = '0xa9059cbb'", None),
])
def test_a_literal_of_a_shape_no_value_of_its_column_has_is_sent_back(condition, finding):
    """A position in the call tree ('1,0') never equals an address: the filter finds nothing."""
    errors = validate_sql(f"SELECT SUM(value) FROM traces WHERE {condition}", TRACES).errors
    assert errors == ([finding] if finding else []), errors


INNER_JOIN_FINDING = ("{column} IS NULL is never true: the inner join on {column} keeps only the rows where it has a "
                      "match; keep the rows without one with a LEFT JOIN")


@pytest.mark.parametrize("sql, column", [
    # what the 1.5B model wrote for "how many transactions went to contracts and how many to other addresses"
    ("SELECT COUNTIF(tx.to_address IS NOT NULL), COUNTIF(tx.to_address IS NULL) FROM transactions AS tx "
     "JOIN contracts AS c ON c.address = tx.to_address", "tx.to_address"),
    ("SELECT COUNT(*) FROM transactions AS tx INNER JOIN contracts AS c ON c.address = tx.to_address AND c.is_erc20 "
     "WHERE c.address IS NULL", "c.address"),
    # the anti-join idiom, a redundant IS NOT NULL, a column the join does not match on, a nested query's own join
    ("SELECT COUNTIF(c.address IS NULL) FROM transactions AS tx LEFT JOIN contracts AS c ON c.address = tx.to_address",
     None),
    ("SELECT COUNT(*) FROM transactions AS tx JOIN contracts AS c ON c.address = tx.to_address "
     "WHERE tx.to_address IS NOT NULL", None),
    ("SELECT COUNTIF(tx.hash IS NULL) FROM transactions AS tx JOIN contracts AS c ON c.address = tx.to_address", None),
    ("SELECT COUNTIF(NOT (c.address IS NULL)) FROM transactions AS tx JOIN contracts AS c ON c.address = tx.to_address",
     None),
    # a right join brings the rows without a match back
    ("SELECT COUNT(*) FROM transactions AS tx JOIN contracts AS c ON c.address = tx.to_address "
     "RIGHT JOIN transactions AS t2 ON t2.hash = tx.hash WHERE tx.to_address IS NULL", None),
    ("SELECT COUNT(*) FROM transactions AS tx WHERE tx.to_address IS NULL AND tx.hash IN "
     "(SELECT t.hash FROM transactions AS t JOIN contracts AS c ON c.address = t.to_address)", None),
])
def test_is_null_on_a_column_an_inner_join_matches_on_is_sent_back(sql, column):
    schema = Schema([Table("transactions", [Column("hash", "STRING"), Column("to_address", "STRING")]),
                     Table("contracts", [Column("address", "STRING"), Column("is_erc20", "BOOL")])], "bigquery")
    errors = validate_sql(sql, schema).errors
    assert errors == ([INNER_JOIN_FINDING.format(column=column)] if column else []), errors


@pytest.mark.parametrize("sql, limit", [
    # what the 1.5B model wrote for "what share of all ETH do the top 100 addresses hold"
    ("SELECT SUM(eth_balance) / 1e18 FROM balances ORDER BY eth_balance DESC LIMIT 100", "LIMIT 100"),
    ("SELECT COUNT(*) FROM balances WHERE eth_balance > 0 LIMIT 10", "LIMIT 10"),
    ("SELECT SUM(eth_balance) FROM balances ORDER BY eth_balance DESC LIMIT 1", "LIMIT 1"),
    # the rows taken first; one row per group; a bare LIMIT 1 on one row; a window keeps the rows
    ("SELECT SUM(eth_balance) FROM (SELECT eth_balance FROM balances ORDER BY eth_balance DESC LIMIT 100)", None),
    ("SELECT address, SUM(eth_balance) FROM balances GROUP BY address ORDER BY 2 DESC LIMIT 100", None),
    ("SELECT MAX(eth_balance) FROM balances LIMIT 1", None),
    ("SELECT MAX(eth_balance) FROM balances ORDER BY eth_balance DESC LIMIT 1", None),
    ("SELECT SUM(eth_balance) OVER (ORDER BY address) FROM balances LIMIT 3", None),
])
def test_a_limit_on_one_aggregated_row_is_sent_back(sql, limit):
    """Aggregation comes before LIMIT: the sum of the top 100 written so is the sum of all."""
    schema = Schema([Table("balances", [Column("address", "STRING"), Column("eth_balance", "NUMERIC")])], "bigquery")
    errors = validate_sql(sql, schema).errors
    assert [e.split(" is aggregated")[1] for e in errors] == (
        [f" over all rows into one row before {limit} applies: to aggregate only those rows, take them in a subquery "
         f"first, SELECT SUM(x) FROM (SELECT x FROM t ORDER BY x DESC {limit})"] if limit else []), errors


def test_a_share_of_the_filtered_rows_is_found_in_sqlite(schema):
    findings = validate_sql("SELECT SUM(CASE WHEN Country = 'France' THEN 1 ELSE 0 END) * 1.0 / COUNT(*) FROM singer "
                            "WHERE Country = 'France'", schema)
    assert "take Country = 'France' out of WHERE" in findings.summary()


WEI = {"transactions.value": Unit(name="wei", columns=("transactions.value",), shown_as="show ETH as {column} / 1e18",
                                  asked_for="wei", least_meant=1e6),
       "blocks.base_fee_per_gas": Unit(name="wei", columns=("blocks.base_fee_per_gas",),
                                       shown_as="show gwei as {column} / 1e9", asked_for="wei", least_meant=1e6)}
WEI_FINDING = "transactions.value is in wei: show ETH as value / 1e18"


@pytest.mark.parametrize("sql,expected", [
    # the outer query shows the raw amount: bare, renamed, cast, summed, rounded, multiplied, in either UNION branch
    ("SELECT value FROM transactions WHERE hash = '0xab'", WEI_FINDING),
    ("SELECT t.value AS eth FROM transactions AS t WHERE t.hash = '0xab'", WEI_FINDING),
    ("SELECT SUM(CAST(value AS NUMERIC)) AS moved FROM transactions", WEI_FINDING),
    ("SELECT ROUND(AVG(value), 2) FROM transactions", WEI_FINDING),
    ("SELECT hash, gas_used * value FROM transactions", WEI_FINDING),
    ("SELECT DATE(timestamp) AS day, AVG(base_fee_per_gas) FROM blocks GROUP BY day",
     "blocks.base_fee_per_gas is in wei: show gwei as base_fee_per_gas / 1e9"),
    ("SELECT COUNT(*) FROM blocks UNION ALL SELECT SUM(value) FROM transactions", WEI_FINDING),
    # converted, compared, counted or only read inside: nothing to say
    ("SELECT SUM(value) / 1e18 AS eth FROM transactions", None),
    ("SELECT ROUND(SUM(value) / 1e18, 2) FROM transactions", None),
    ("SELECT COUNT(*) FROM transactions WHERE value > 1e18", None),
    ("SELECT COUNTIF(value > 0) FROM transactions", None),
    ("SELECT hash FROM transactions ORDER BY value DESC LIMIT 5", None),
    ("SELECT 100 * SUM(IF(value > 1e18, value, 0)) / SUM(value) AS pct FROM transactions", None),
    ("SELECT moved / 1e18 FROM (SELECT SUM(value) AS moved FROM transactions)", None),
    ("SELECT hash, value * 1e-18 AS eth FROM transactions", None),  # a product with a number may convert
    ("SELECT number, miner FROM blocks ORDER BY base_fee_per_gas DESC LIMIT 1", None),
])
def test_an_amount_shown_in_its_base_unit_is_sent_back(sql, expected):
    schema = Schema([
        Table("transactions", [Column("hash", "STRING"), Column("value", "NUMERIC"), Column("gas_used", "INT64")]),
        Table("blocks", [Column("number", "INT64"), Column("timestamp", "TIMESTAMP"), Column("miner", "STRING"),
                         Column("base_fee_per_gas", "INT64")]),
    ], "bigquery")
    findings = validate_sql(sql, schema, units=WEI)
    assert not internal_failures(findings), findings
    assert [e for e in findings.errors if " is in wei" in e] == ([expected] if expected else []), findings
    assert " is in wei" not in validate_sql(sql, schema).summary()  # no units given: nothing known about them


@pytest.mark.parametrize("sql, flagged", [
    # what the 1.5B model wrote for "what percentage of all ETH do whales (more than 1,000 ETH each) hold?"
    ("SELECT 100 * COUNTIF(value > 1000) / COUNT(*) FROM transactions", "value > 1000"),
    ("SELECT hash FROM transactions WHERE value >= 0.5", "value >= 0.5"),
    ("SELECT number FROM blocks WHERE base_fee_per_gas < 30", "base_fee_per_gas < 30"),
    ("SELECT number FROM blocks WHERE 30 > base_fee_per_gas", "30 > base_fee_per_gas"),
    ("SELECT hash FROM transactions GROUP BY hash HAVING SUM(value) > 5", "SUM(value) > 5"),
    ("SELECT COUNT(*) FROM (SELECT value FROM transactions) WHERE value > 10", None),  # a derived column: not known
    # a figure in the column's unit, a zero bound, a converted column: nothing to say
    ("SELECT COUNT(*) FROM transactions WHERE value > 1000 * 1e18", None),
    ("SELECT COUNT(*) FROM transactions WHERE value > 1e18", None),
    ("SELECT COUNT(*) FROM transactions WHERE value > 0", None),
    ("SELECT COUNT(*) FROM transactions WHERE value / 1e18 > 1000", None),
    ("SELECT COUNT(*) FROM transactions WHERE gas_used > 21000", None),  # gas is no amount of wei
    ("SELECT COUNT(*) FROM blocks WHERE base_fee_per_gas > 30000000000", None),
    ("SELECT COUNT(*) FROM transactions WHERE value BETWEEN 1 AND 10", "value BETWEEN 1 AND 10"),
    ("SELECT COUNT(*) FROM transactions WHERE value BETWEEN 1e18 AND 10 * 1e18", None),
    ("SELECT COUNT(*) FROM transactions WHERE value > -1", None),  # a bound below zero keeps every amount, as meant
])
def test_an_amount_compared_with_a_figure_meant_in_a_larger_unit_is_sent_back(sql, flagged):
    schema = Schema([
        Table("transactions", [Column("hash", "STRING"), Column("value", "NUMERIC"), Column("gas_used", "INT64")]),
        Table("blocks", [Column("number", "INT64"), Column("base_fee_per_gas", "INT64")]),
    ], "bigquery")
    findings = validate_sql(sql, schema, units=WEI)
    assert not internal_failures(findings), findings
    tiny = [e for e in findings.errors if "almost nothing" in e]
    assert len(tiny) == (1 if flagged else 0), findings
    assert not flagged or tiny[0].startswith(f"{flagged} compares ") and "wei" in tiny[0], tiny
    assert "almost nothing" not in validate_sql(sql, schema).summary()  # no units given: nothing known about them


SCALED = {"transactions.value": WEI["transactions.value"].model_copy(update={"scales": {"ETH": 1e18, "gwei": 1e9}})}


@pytest.mark.parametrize("question, sql, flagged", [
    # what the 1.5B model wrote for "how many transactions in the last 30 days moved more than 10 ETH?"
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value > 1000000000000000",
     "value > 1000000000000000 compares transactions.value (wei) with 0.001 ETH, none of the amounts the question "
     "gives (10 ETH); 10 ETH is value > 10 * 1e18"),
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value / 1e9 > 10",
     "value / 1e9 > 10 compares transactions.value (wei) with 1e-08 ETH, none of the amounts the question gives "
     "(10 ETH); 10 ETH is value / 1e9 > 10 * 1e9"),
    ("holding at least 1,000.5 ETH", "SELECT hash FROM transactions GROUP BY hash HAVING SUM(value) >= 1e21",
     "SUM(value) >= 1e21 compares transactions.value (wei) with 1000 ETH, none of the amounts the question gives "
     "(1,000.5 ETH); 1,000.5 ETH is SUM(value) >= 1000.5 * 1e18"),
    # the amount named is the one the figure is closest to, in its own scale
    ("more than 10 ETH with gas prices over 29.99 gwei", "SELECT COUNT(*) FROM transactions WHERE value > 3e10",
     "value > 3e10 compares transactions.value (wei) with 30 gwei, none of the amounts the question gives "
     "(10 ETH, 29.99 gwei); 29.99 gwei is value > 29.99 * 1e9"),
    # the question's amount however the conversion is written, on either side; its other numbers; zero
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value > 10 * 1e18", None),
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE 10 * POWER(10, 18) < value", None),
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE CAST(value AS NUMERIC) / 1e18 > 10", None),
    ("moved more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value * 1e-18 > 10 AND value > 0", None),
    ("between 0.1 and 1 ETH", "SELECT COUNT(*) FROM transactions WHERE value BETWEEN 0.1 * 1e18 AND 1e18", None),
    ("32 ETH, i.e. 32,000,000,000 gwei", "SELECT COUNT(*) FROM transactions WHERE value / 1e9 >= 32000000000", None),
    # no amount in the column's scales, a bound of a range in a histogram, almost nothing (another check's)
    ("the top 10 transfers", "SELECT COUNT(*) FROM transactions WHERE value > 1e15", None),
    ("under 1 ETH or more", "SELECT CASE WHEN value < 1e18 THEN 'a' WHEN value < 1e30 THEN 'b' END FROM transactions",
     None),
    ("more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value > 10", None),
    # arithmetic that makes no real number: no figure
    ("more than 10 ETH", "SELECT COUNT(*) FROM transactions WHERE value > POWER(0, -1) OR value > POWER(-8, 0.5) "
     "OR value * 1e-300 * 1e-300 > 1 OR value > 1e308 * 10", None),
])
def test_an_amount_compared_with_none_of_the_questions_amounts_is_sent_back(question, sql, flagged):
    schema = Schema([Table("transactions", [Column("hash", "STRING"), Column("value", "NUMERIC")])], "bigquery")
    findings = validate_sql(sql, schema, units=SCALED, question=question)
    assert not internal_failures(findings), findings
    assert [e for e in findings.errors if "none of the amounts" in e] == ([flagged] if flagged else []), findings
    assert "none of the amounts" not in validate_sql(sql, schema, question=question).summary()


def test_an_amount_in_its_base_unit_is_found_through_qualified_and_short_table_names(ethereum):
    units = {"transactions.value": WEI["transactions.value"]}
    for table in ("`bigquery-public-data.crypto_ethereum.transactions`", "transactions"):
        assert validate_sql(f"SELECT SUM(value) FROM {table}", ethereum, units=units).errors == [WEI_FINDING]


GWEI = {"blocks.withdrawals.amount": Unit(name="gwei", columns=("blocks.withdrawals.amount",),
                                         shown_as="show ETH as CAST({column} AS NUMERIC) / 1e9", asked_for="gwei",
                                         least_meant=1000, scales={"ETH": 1e9, "gwei": 1})}
WITHDRAWALS = Schema([Table("blocks", [
    Column("number", "INT64"), Column("timestamp", "TIMESTAMP"),
    Column("withdrawals", "ARRAY<STRUCT<index INT64, validator_index INT64, address STRING, amount STRING>>")])],
    "bigquery")


@pytest.mark.parametrize("question, sql, found", [
    # a field of an UNNESTed struct array is a column like any other: shown raw, compared with a figure too small
    # or with none of the question's amounts
    ("How much ETH was withdrawn yesterday?", "SELECT SUM(CAST(w.amount AS NUMERIC)) FROM blocks, UNNEST(withdrawals) "
     "AS w", "blocks.withdrawals.amount is in gwei: show ETH as CAST(amount AS NUMERIC) / 1e9"),
    ("withdrawals of at least 32 ETH", "SELECT COUNT(*) FROM blocks AS b JOIN UNNEST(b.withdrawals) AS w ON TRUE "
     "WHERE CAST(w.amount AS INT64) >= 32", "CAST(w.amount AS INT64) >= 32 compares blocks.withdrawals.amount, an "
     "amount in gwei, with 32 gwei, almost nothing"),
    # what the 1.5B model wrote for "full validator exits (withdrawals of at least 32 ETH, i.e. 32,000,000,000 gwei)"
    ("withdrawals of at least 32 ETH, i.e. 32,000,000,000 gwei", "SELECT COUNT(*) FROM blocks, UNNEST(withdrawals) AS"
     " w WHERE CAST(w.amount AS NUMERIC) / 1e9 >= 32000000000", "CAST(w.amount AS NUMERIC) / 1e9 >= 32000000000 "
     "compares blocks.withdrawals.amount (gwei) with 3.2e+19 gwei, none of the amounts the question gives (32 ETH, "
     "32,000,000,000 gwei); 32,000,000,000 gwei is CAST(w.amount AS NUMERIC) / 1e9 >= 32"),
    # converted, or compared with the question's amount in either scale: nothing to say
    ("How much ETH was withdrawn?", "SELECT SUM(CAST(w.amount AS NUMERIC)) / 1e9 FROM blocks, UNNEST(withdrawals) AS w",
     None),
    ("at least 32 ETH", "SELECT COUNT(*) FROM blocks, UNNEST(withdrawals) AS w WHERE CAST(w.amount AS INT64) >= 32e9",
     None),
    ("at least 32 ETH", "SELECT COUNT(*) FROM blocks, UNNEST(withdrawals) AS w WHERE CAST(w.amount AS NUMERIC) / 1e9 "
     ">= 32", None),
    ("How many withdrawals?", "SELECT COUNT(*) FROM blocks, UNNEST(withdrawals) AS w WHERE w.validator_index > 5", None),
    # an array of the enclosing query's table
    ("blocks with a withdrawal of at least 32 ETH", "SELECT number FROM blocks AS b WHERE EXISTS (SELECT 1 FROM "
     "UNNEST(b.withdrawals) AS w WHERE CAST(w.amount AS INT64) >= 32)", "CAST(w.amount AS INT64) >= 32 compares "
     "blocks.withdrawals.amount, an amount in gwei, with 32 gwei, almost nothing"),
])
def test_an_amount_in_a_struct_array_is_judged_through_unnest(question, sql, found):
    findings = validate_sql(sql, WITHDRAWALS, units=GWEI, question=question)
    assert not internal_failures(findings), findings
    judged = [e for e in findings.errors if "blocks.withdrawals.amount" in e]
    assert [e.split(": convert")[0] for e in judged] == ([found] if found else []), findings


def test_unnested_records_are_no_table_a_finding_names():
    """Records go by two names (as written and once qualified); a finding about another column names tables only."""
    findings = validate_sql("SELECT nosuch FROM blocks, UNNEST(withdrawals) AS w, UNNEST(withdrawals) AS v",
                            WITHDRAWALS)
    assert findings.errors == ["Column 'nosuch' does not exist in blocks"]


@pytest.mark.parametrize("sql, found", [
    # a field the records lack, with the array's table's column of that name when it has one
    ("SELECT w.amount FROM blocks, UNNEST(withdrawals) AS w WHERE DATE(w.timestamp) = CURRENT_DATE()",
     "Column 'w.timestamp' cannot be read: w is one of blocks.withdrawals, whose fields are index, validator_index, "
     "address, amount; timestamp is a column of blocks"),
    ("SELECT SUM(w.amount_gwei) FROM blocks AS b JOIN UNNEST(b.withdrawals) AS w ON TRUE",
     "Column 'w.amount_gwei' cannot be read: w is one of blocks.withdrawals, whose fields are index, validator_index, "
     "address, amount"),
    # an array of the enclosing query's table
    ("SELECT number FROM blocks AS b WHERE EXISTS (SELECT 1 FROM UNNEST(b.withdrawals) AS w WHERE w.timestamp > 0)",
     "Column 'w.timestamp' cannot be read: w is one of blocks.withdrawals, whose fields are index, validator_index, "
     "address, amount; timestamp is a column of blocks"),
    # the records' own fields, the table's columns beside them
    ("SELECT b.number, w.address, w.amount FROM blocks AS b, UNNEST(b.withdrawals) AS w WHERE w.validator_index = 5",
     None),
])
def test_a_field_an_unnested_record_lacks_is_sent_back(sql, found):
    findings = validate_sql(sql, WITHDRAWALS)
    assert not internal_failures(findings), findings
    assert [e for e in findings.errors if "cannot be read" in e] == ([found] if found else []), findings


@pytest.mark.parametrize("dialect, type_text, fix", [
    ("duckdb", "VARCHAR[]", "list_contains(tags, 'x')"),
    ("postgres", "TEXT[]", "'x' = ANY(tags)"),
])
def test_the_array_finding_names_the_dialects_idiom(dialect, type_text, fix):
    schema = Schema([Table("posts", [Column("id", "INT"), Column("tags", type_text)])], dialect)
    assert fix in validate_sql("SELECT id FROM posts WHERE tags = 'sql'", schema).summary()
    assert validate_sql("SELECT id FROM posts WHERE tags = 'sql'", Schema(schema.tables, "sqlite")).ok  # no arrays there


@pytest.mark.parametrize("sql,warning", [
    ("SELECT * FROM singer", "SELECT *"),
    ("SELECT Name, count(*) FROM singer", "without GROUP BY"),
    ("SELECT T2.Name FROM concert AS T1 JOIN singer AS T2 ON T1.concert_ID = T2.Singer_ID",
     "join concert.concert_id = singer.singer_id is not on a foreign key"),
    # Each scope's aliases are its own: T1 is singer in the outer query and concert in the inner one.
    ("SELECT T1.Name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.Singer_ID = T2.concert_ID "
     "WHERE T2.concert_ID IN (SELECT T1.concert_ID FROM concert AS T1)",
     "join singer.singer_id = singer_in_concert.concert_id is not on a foreign key"),
    ("SELECT x.n FROM (SELECT T2.Name AS n FROM concert AS T1 JOIN singer AS T2 ON T1.concert_ID = T2.Singer_ID) AS x",
     "join concert.concert_id = singer.singer_id is not on a foreign key"),
])
def test_validation_warnings(schema, sql, warning):
    findings = validate_sql(sql, schema)
    assert findings.ok and any(warning in w for w in findings.warnings), findings


@pytest.mark.parametrize("sql", [
    "SELECT T1.Name FROM stadium AS T1 JOIN concert AS T2 ON T1.Stadium_ID = T2.Stadium_ID",
    "SELECT stadium.Name FROM concert JOIN stadium ON concert.Stadium_ID = stadium.Stadium_ID",
    "SELECT Name FROM concert JOIN stadium USING (Stadium_ID)",
    "WITH c AS (SELECT concert_ID AS k FROM concert) SELECT s.Name FROM c JOIN singer AS s ON c.k = s.Singer_ID",
])
def test_joins_on_foreign_keys_or_derived_tables_are_not_flagged(schema, sql):
    assert not any("foreign key" in w for w in validate_sql(sql, schema).warnings)


def test_strict_dialects_make_ungrouped_aggregates_errors(schema):
    strict = Schema(schema.tables, "duckdb", schema.name)
    assert not validate_sql("SELECT Name, count(*) FROM singer", strict).ok
    assert validate_sql("SELECT Name, count(*) FROM singer", schema).ok


@pytest.mark.parametrize("sql", [
    # a scalar subquery's aggregate, correlated or not, and a window's, belong to them, not to the outer SELECT
    "SELECT s.Name, (SELECT count(*) FROM singer_in_concert AS c WHERE c.Singer_ID = s.Singer_ID) FROM singer AS s",
    "SELECT Name, (SELECT max(Age) FROM singer) AS oldest FROM singer",
    "SELECT Name, count(*) OVER () FROM singer",
])
def test_aggregates_of_subqueries_and_windows_need_no_group_by(schema, sql):
    strict = Schema(schema.tables, "duckdb", schema.name)
    assert not any("GROUP BY" in f for f in validate_sql(sql, strict).errors), sql


def test_a_failing_check_keeps_the_other_checks_findings(schema, monkeypatch, caplog):
    def check(*args):
        raise AttributeError("'In' object has no attribute 'right'")

    monkeypatch.setattr(TextAgainstNumbers, "check", check)
    findings = validate_sql("SELECT count(*) AS a, count(*) AS b FROM singer AS T1 JOIN concert AS T2 "
                            "ON T1.Singer_ID = T2.concert_ID WHERE T1.Age = 'old'", schema)
    assert findings.errors == ["columns a and b both compute COUNT(*): make each compute what its name says"]
    assert internal_failures(findings) == [
        "validation step text_against_numbers failed: AttributeError: 'In' object has no attribute 'right'"]
    assert any("foreign key" in w for w in findings.warnings), "checks after the failing one still ran"
    assert "text_against_numbers failed" in caplog.text


def test_a_failing_qualification_leaves_the_checks_the_written_tree(schema, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("scope")

    monkeypatch.setattr(analysis, "qualify", broken)
    findings = validate_sql("SELECT s.Name FROM singer AS s WHERE s.Age = 'old'", schema)
    assert internal_failures(findings) == ["validation step columns failed: KeyError: 'scope'"]
    assert any("singer.Age holds numbers" in e for e in findings.errors)


def test_one_failing_candidate_does_not_stop_the_others():
    """A bug inside validating or running one candidate is recorded on it; the other candidates go on."""
    def validate_(sql):
        if "boom_validate" in sql:
            raise AttributeError("'In' object has no attribute 'right'")
        return Findings(errors=["table t does not exist"] if "bad" in sql else [])

    def execute(sql):
        if "boom_execute" in sql:
            raise RuntimeError("engine\nexploded")
        if "refused" in sql:
            return None, "only read-only queries are allowed"
        return type("Result", (), {"rows": [(1,)] if "rows" in sql else []})(), None

    sqls = ["SELECT boom_validate", "SELECT boom_execute", "SELECT rows", "SELECT none", "SELECT bad", "SELECT refused"]
    executions = execute_candidates([Candidate(sql, "test") for sql in sqls], validate_, execute)
    assert [(ex.candidate.sql, ex.status, ex.error) for ex in executions] == [
        ("SELECT boom_validate", "invalid", "validation failed: AttributeError: 'In' object has no attribute 'right'"),
        ("SELECT boom_execute", "error", "execution failed: RuntimeError: engine"),
        ("SELECT rows", "success", None),
        ("SELECT none", "empty", None),
        ("SELECT bad", "invalid", "table t does not exist"),
        ("SELECT refused", "error", "only read-only queries are allowed"),
    ]
    assert executions[0].problem() == "validation failed: AttributeError: 'In' object has no attribute 'right'"


def test_a_literal_copied_from_a_shortened_example_value_is_an_error(concert_db):
    from askchain.db import open_database

    schema = open_database(str(concert_db)).schema()
    findings = validate_sql("SELECT Name FROM singer WHERE Name = '0x00000000000000ad…'", schema)
    assert any("shortened example" in e for e in findings.errors)
    assert validate_sql("SELECT Name FROM singer WHERE Name = 'Joe Sharp'", schema).ok


GROUPS_NOT_SHOWN = "gives one row per group, but the result shows only aggregates"


@pytest.mark.parametrize("sql,grouped", [
    # what the 1.5B model wrote for "how many addresses hold less than 1 ETH, 1 to 10 ETH, ...?" (the buckets lost)
    ("SELECT COUNT(*) AS count FROM (SELECT CASE WHEN Age < 30 THEN 'young' ELSE 'old' END AS bucket FROM singer) "
     "AS b GROUP BY bucket", "bucket"),
    # "what is the maximum accelerate for all the different cylinders?" (Spider): the cylinders lost
    ("SELECT MAX(Capacity) FROM stadium GROUP BY Location", "Location"),
    # one figure over the groups asked, one row per group answered
    ("SELECT COUNT(*) FROM singer GROUP BY Country HAVING COUNT(*) > 2", "Country"),
    ("SELECT MAX(Age) FROM singer GROUP BY Country UNION SELECT MIN(Age) FROM singer", "Country"),
    # the group is shown: as a column, renamed, as an expression, by an aggregate that is the group's own value
    ("SELECT Country, COUNT(*) FROM singer GROUP BY Country", None),
    ("SELECT Country AS c, COUNT(*) FROM singer GROUP BY Country", None),
    ("SELECT UPPER(Country), COUNT(*) FROM singer GROUP BY UPPER(Country)", None),
    ("SELECT AVG(Age), AVG(Song_release_year) FROM singer GROUP BY Song_release_year", None),
    ("SELECT s.Name, COUNT(*) FROM singer AS s GROUP BY s.Singer_ID", None),  # by id, named by name
    ("SELECT COUNT(*) FROM singer GROUP BY 1", None),  # by position: the projection is the group
    # grouping inside a subquery or a CTE, aggregated again outside, and no grouping at all
    ("SELECT AVG(n) FROM (SELECT COUNT(*) AS n FROM singer GROUP BY Country) AS t", None),
    ("WITH c AS (SELECT COUNT(*) AS n FROM singer GROUP BY Country) SELECT MAX(n) FROM c", None),
    ("SELECT COUNT(*) FROM singer", None),
])
def test_a_grouped_result_that_shows_no_group_is_sent_back(schema, sql, grouped):
    findings = validate_sql(sql, schema)
    assert not internal_failures(findings), findings
    found = [e for e in findings.errors if GROUPS_NOT_SHOWN in e]
    if grouped is None:
        assert not found, findings
    else:
        assert found == [f"GROUP BY {grouped} {GROUPS_NOT_SHOWN}, so no row says which group it is: select {grouped} "
                         "beside them, or, for one figure over all the groups, aggregate the grouped rows in an outer query"]
