"""A ranked answer shows what it is ranked by: the outermost first ORDER BY key joins the projection when missing."""

import pytest

from askchain.rules.repairs.ranking_measure import show_ranking_measure


@pytest.mark.parametrize("sql, shown, notes", [
    ("SELECT EXTRACT(HOUR FROM timestamp) AS hour FROM blocks GROUP BY hour ORDER BY AVG(base_fee_per_gas) / 1e9 LIMIT 1",
     "SELECT EXTRACT(HOUR FROM timestamp) AS hour, AVG(base_fee_per_gas) / 1e9 AS avg_base_fee_per_gas "
     "FROM blocks GROUP BY hour ORDER BY AVG(base_fee_per_gas) / 1e9 LIMIT 1",
     ["shows the ranking measure AVG(base_fee_per_gas) / 1e9 as avg_base_fee_per_gas"]),
    ("SELECT topics[SAFE_OFFSET(0)] AS topic0\nFROM logs\nGROUP BY 1\nORDER BY COUNT(*) DESC\nLIMIT 1",
     "SELECT topics[SAFE_OFFSET(0)] AS topic0, COUNT(*) AS count\nFROM logs\nGROUP BY 1\nORDER BY COUNT(*) DESC\nLIMIT 1",
     ["shows the ranking measure COUNT(*) as count"]),
    # a subquery's column, with a WITH clause and a subquery in FROM: only the outermost FROM is the insertion point
    ("WITH d AS (SELECT x FROM t) SELECT s.day FROM (SELECT day, AVG(x) AS avg_x FROM d GROUP BY day) AS s "
     "ORDER BY s.avg_x DESC LIMIT 1",
     "WITH d AS (SELECT x FROM t) SELECT s.day, s.avg_x FROM (SELECT day, AVG(x) AS avg_x FROM d GROUP BY day) AS s "
     "ORDER BY s.avg_x DESC LIMIT 1", ["shows the ranking measure s.avg_x"]),
    # DISTINCT rows ordered by a key they do not show: GoogleSQL refuses it, DuckDB orders by an arbitrary value
    ("SELECT DISTINCT T1.weekday FROM (SELECT weekday, AVG(n) AS avg_n FROM t GROUP BY weekday) AS T1 "
     "ORDER BY avg_n DESC LIMIT 1",
     "SELECT DISTINCT T1.weekday, avg_n FROM (SELECT weekday, AVG(n) AS avg_n FROM t GROUP BY weekday) AS T1 "
     "ORDER BY avg_n DESC LIMIT 1", ["shows the ranking measure avg_n"]),
    # only the ranking itself; later keys break its ties
    ("SELECT hash FROM transactions ORDER BY block_number DESC, transaction_index LIMIT 1",
     "SELECT hash, block_number FROM transactions ORDER BY block_number DESC, transaction_index LIMIT 1",
     ["shows the ranking measure block_number"]),
    ("SELECT miner FROM blocks GROUP BY miner ORDER BY COUNT(DISTINCT DATE(timestamp)) DESC LIMIT 3",
     "SELECT miner, COUNT(DISTINCT DATE(timestamp)) AS count_timestamp "
     "FROM blocks GROUP BY miner ORDER BY COUNT(DISTINCT DATE(timestamp)) DESC LIMIT 3",
     ["shows the ranking measure COUNT(DISTINCT DATE(timestamp)) as count_timestamp"]),
    # after a trailing comma, and before a comment that ends the projection's line
    ("SELECT miner, FROM blocks ORDER BY number", "SELECT miner, number FROM blocks ORDER BY number",
     ["shows the ranking measure number"]),
    ("SELECT\n  miner -- who built it\nFROM blocks ORDER BY number",
     "SELECT\n  miner, number -- who built it\nFROM blocks ORDER BY number", ["shows the ranking measure number"]),
    # a base-unit column converted by the key itself
    ("SELECT to_address FROM transactions GROUP BY 1 ORDER BY SUM(value) / 1e18 DESC LIMIT 5",
     "SELECT to_address, SUM(value) / 1e18 AS sum_value FROM transactions GROUP BY 1 ORDER BY SUM(value) / 1e18 DESC "
     "LIMIT 5", ["shows the ranking measure SUM(value) / 1e18 as sum_value"]),
    # a function is named after itself and its columns
    ("SELECT SUM(value) / 1e18 AS eth FROM transactions GROUP BY DATE(block_timestamp) ORDER BY DATE(block_timestamp)",
     "SELECT SUM(value) / 1e18 AS eth, DATE(block_timestamp) AS date_block_timestamp FROM transactions "
     "GROUP BY DATE(block_timestamp) ORDER BY DATE(block_timestamp)",
     ["shows the ranking measure DATE(block_timestamp) as date_block_timestamp"]),
    # two aggregates: neither name would say what it is
    ("SELECT miner FROM blocks GROUP BY miner ORDER BY SAFE_DIVIDE(SUM(gas_used), COUNT(*)) DESC",
     "SELECT miner, SAFE_DIVIDE(SUM(gas_used), COUNT(*)) AS measure FROM blocks GROUP BY miner "
     "ORDER BY SAFE_DIVIDE(SUM(gas_used), COUNT(*)) DESC",
     ["shows the ranking measure SAFE_DIVIDE(SUM(gas_used), COUNT(*)) as measure"]),
])
def test_a_ranking_measure_the_answer_hides_is_shown(sql, shown, notes):
    assert show_ranking_measure(sql, "bigquery", ["balances.eth_balance", "transactions.value"]) == (shown, notes)


@pytest.mark.parametrize("sql", [
    "SELECT miner, COUNT(*) AS blocks FROM blocks GROUP BY miner ORDER BY blocks DESC LIMIT 10",  # by its output name
    "SELECT miner, COUNT(*) FROM blocks GROUP BY miner ORDER BY COUNT(*) DESC LIMIT 10",  # the same expression
    "SELECT b.miner, COUNT(*) FROM blocks AS b GROUP BY b.miner ORDER BY miner",  # the same column, qualified or not
    "SELECT miner, COUNT(*) AS n FROM blocks GROUP BY miner ORDER BY n / 2 DESC",  # reads an output name
    "SELECT miner, COUNT(*) AS n FROM blocks GROUP BY 1 ORDER BY 2 DESC",  # by position
    "SELECT * FROM blocks ORDER BY number DESC LIMIT 1",  # every column is shown
    "SELECT DISTINCT miner FROM blocks ORDER BY miner",  # DISTINCT, ordered by what it shows
    "SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY a",  # the order of a set operation
    "SELECT x AS count FROM t ORDER BY COUNT(*)",  # its name is taken
    "SELECT COUNT(*) FROM blocks",  # not ranked
    "SELEC miner FROM blocks ORDER BY x",  # unreadable: validation reports it
    # shown inside a projected expression, converted from its base unit
    "SELECT address, eth_balance / 1e18 AS eth FROM balances ORDER BY eth_balance DESC LIMIT 10",
    "SELECT to_address, SUM(value) / 1e18 AS eth FROM transactions GROUP BY 1 ORDER BY SUM(value) DESC LIMIT 5",
    # in a base unit and not shown: appended raw it would be sent back by validation; converting it is the model's
    "SELECT address FROM balances ORDER BY eth_balance DESC LIMIT 10",
    "SELECT to_address FROM transactions GROUP BY 1 ORDER BY SUM(t.value) DESC LIMIT 5",
    "SELECT AS STRUCT miner FROM blocks ORDER BY number",  # one struct per row
    "SELECT AS VALUE miner FROM blocks ORDER BY number",
])
def test_an_answer_that_shows_its_ranking_or_has_none_is_left_as_written(sql):
    assert show_ranking_measure(sql, "bigquery", ["balances.eth_balance", "transactions.value"]) == (sql, [])


@pytest.mark.parametrize("sql", [
    "FROM blocks SELECT miner ORDER BY number",  # FROM first
    "SELECT miner FROM blocks ORDER BY ALL",  # every column, in order
])
def test_duckdb_forms_without_a_measure_to_add_are_left_as_written(sql):
    assert show_ranking_measure(sql, "duckdb") == (sql, [])
