"""The governed semantic model: it loads from the domain's YAML, its catalog and JSON schema name only what exists,
each window compiles to the bank's convention, the SQL is readable GoogleSQL, and a rejected query says why in one
line."""

from __future__ import annotations

import json

import pytest
import sqlglot
from sqlglot import exp

from askchain.errors import SemanticQueryError
from askchain.semantic.governed import SemanticQuery

TABLES = {"blocks", "transactions", "logs", "token_transfers", "traces", "contracts", "tokens", "balances"}

#: The bank's window conventions (eval/README.md) as GoogleSQL over a time column `{t}`, with the parameter each
#: window is tried with.
CONVENTIONS = {
    "none": (None, "TRUE"),
    "yesterday": (None, "DATE({t}) = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)"),
    "today": (None, "DATE({t}) = CURRENT_DATE()"),
    "n_days_ago": (8, "DATE({t}) = DATE_SUB(CURRENT_DATE(), INTERVAL 8 DAY)"),
    "last_n_days": (7, "DATE({t}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE({t}) < CURRENT_DATE()"),
    "previous_n_days": (7, "DATE({t}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 14 DAY) "
                           "AND DATE({t}) < DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)"),
    "last_n_hours": (24, "{t} >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 24 HOUR)"),
    "this_week": (None, "DATE({t}) >= DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY))"),
    "last_n_weeks": (2, "DATE({t}) >= DATE_SUB(DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY)), INTERVAL 14 DAY) "
                        "AND DATE({t}) < DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY))"),
    "previous_n_weeks": (1, "DATE({t}) >= DATE_SUB(DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY)), INTERVAL 14 DAY) "
                            "AND DATE({t}) < DATE_SUB(DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY)), INTERVAL 7 DAY)"),
    "this_month": (None, "DATE({t}) >= DATE_TRUNC(CURRENT_DATE(), MONTH)"),
    "last_n_months": (2, "DATE({t}) >= DATE_SUB(DATE_TRUNC(CURRENT_DATE(), MONTH), INTERVAL 2 MONTH) "
                         "AND DATE({t}) < DATE_TRUNC(CURRENT_DATE(), MONTH)"),
    "previous_n_months": (1, "DATE({t}) >= DATE_SUB(DATE_TRUNC(CURRENT_DATE(), MONTH), INTERVAL 2 MONTH) "
                             "AND DATE({t}) < DATE_SUB(DATE_TRUNC(CURRENT_DATE(), MONTH), INTERVAL 1 MONTH)"),
    "last_month": (None, "DATE({t}) >= DATE_TRUNC(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH), MONTH) "
                         "AND DATE({t}) < DATE_TRUNC(CURRENT_DATE(), MONTH)"),
    "before_today": (None, "DATE({t}) < CURRENT_DATE()"),
    "before_this_week": (None, "DATE({t}) < DATE_TRUNC(CURRENT_DATE(), WEEK(MONDAY))"),
    "before_this_month": (None, "DATE({t}) < DATE_TRUNC(CURRENT_DATE(), MONTH)"),
    "before_this_year": (None, "DATE({t}) < DATE_TRUNC(CURRENT_DATE(), YEAR)"),
}
DATASET = "bigquery-public-data.crypto_ethereum"


def tables_read(sql: str) -> set[str]:
    return {".".join(part.name for part in t.parts) for t in sqlglot.parse_one(sql, read="bigquery").find_all(exp.Table)}


def window(name: str) -> dict | None:
    n = CONVENTIONS[name][0]
    return {"name": name} if n is None else {"name": name, "n": n}


def test_the_model_covers_every_table_and_describes_every_name(semantic_model):
    catalog = semantic_model.catalog()
    read = set()
    for model in catalog["models"]:
        compiled = semantic_model.compile({"model": model["name"], "measures": [model["measures"][0]["name"]],
                                           "dimensions": [], "window": None})
        read |= {name.rsplit(".", 1)[-1] for name in tables_read(compiled.sql)}
        for field in model["measures"] + model["dimensions"]:
            assert field["description"] and field["unit"], (model["name"], field["name"])
    assert read == TABLES
    assert {w["name"] for w in catalog["windows"]} == set(CONVENTIONS)


def test_the_catalog_carries_well_known_entities(semantic_model):
    blocks = next(m for m in semantic_model.catalog()["models"] if m["name"] == "blocks")
    miner = next(d for d in blocks["dimensions"] if d["name"] == "miner")
    assert {"value": "0x4838b106fce9647bdf1e7877bf73ce8b0bad5f97", "name": "Titan (titanbuilder.xyz)"} \
        in miner["known_values"]
    transfers = next(m for m in semantic_model.catalog()["models"] if m["name"] == "token_transfers")
    symbol = next(d for d in transfers["dimensions"] if d["name"] == "token_symbol")
    assert "USDC" in {v["value"] for v in symbol["known_values"]}


def test_the_json_schema_names_only_what_each_model_has(semantic_model):
    schema = semantic_model.json_schema()
    by_model = {m["name"]: m for m in semantic_model.catalog()["models"]}
    assert len(schema["anyOf"]) == len(by_model)
    for option in schema["anyOf"]:
        model = by_model[option["properties"]["model"]["const"]]
        props = option["properties"]
        assert props["measures"]["items"]["enum"] == [m["name"] for m in model["measures"]]
        assert props["dimensions"]["items"]["enum"] == [d["name"] for d in model["dimensions"]]
    jsonschema = pytest.importorskip("jsonschema")
    good = {"model": "transactions", "measures": ["failed_share"], "dimensions": ["day"],
            "window": {"name": "last_n_days", "n": 7}, "order_by": [{"field": "day", "direction": "asc"}]}
    jsonschema.validate(good, schema)
    for bad in ({**good, "measures": ["failed_ratio"]}, {**good, "dimensions": ["symbol"]},
                {**good, "model": "swaps"}, {**good, "window": {"name": "last_n_days"}},
                {**good, "window": {"name": "fortnight"}}, {**good, "order_by": [{"field": "hash_rate"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    balances = {"model": "balances", "measures": ["address_count"], "dimensions": [], "window": {"name": "yesterday"}}
    with pytest.raises(jsonschema.ValidationError):  # balances has no time column
        jsonschema.validate(balances, schema)


def test_llama_cpp_turns_the_schema_into_a_grammar(semantic_model):
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    rules = grammar.json_schema_to_gbnf(json.dumps(semantic_model.json_schema()))
    assert '"\\"failed_share\\""' in rules
    assert grammar.LlamaGrammar.from_json_schema(json.dumps(semantic_model.json_schema()), verbose=False)


#: Windows whose rows lie where transactions (the simulated recent months) have none: counted on another table.
COUNTED_ON = {"before_this_year": ("contracts", "contract_count")}


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_each_window_counts_what_the_bank_convention_counts(name, semantic_model, run_pinned):
    table, measure = COUNTED_ON.get(name, ("transactions", "transaction_count"))
    compiled = semantic_model.compile({"model": table, "measures": [measure], "dimensions": [],
                                       "window": window(name)})
    convention = CONVENTIONS[name][1].format(t="block_timestamp")
    gold = f"SELECT COUNT(*) FROM `{DATASET}.{table}` WHERE {convention}"
    _, rows = run_pinned(compiled.sql)
    _, expected = run_pinned(gold)
    assert rows == expected and expected[0][0] > 0


@pytest.mark.parametrize("model, measure", [("blocks", "block_count"), ("withdrawals", "withdrawal_count"),
                                            ("logs", "log_count"), ("token_transfers", "transfer_count"),
                                            ("traces", "trace_count"), ("contracts", "contract_count"),
                                            ("tokens", "token_count")])
def test_a_window_filters_each_model_on_its_own_time(model, measure, semantic_model):
    compiled = semantic_model.compile({"model": model, "measures": [measure], "dimensions": [],
                                       "window": {"name": "yesterday"}})
    column = "timestamp" if model in ("blocks", "withdrawals") else "block_timestamp"
    where = sqlglot.parse_one(compiled.sql, read="bigquery").args["where"]
    assert [c.name for c in where.find_all(exp.Column)] == [column]


def test_compiled_sql_is_one_flat_select_on_fully_qualified_tables(semantic_model):
    compiled = semantic_model.compile({
        "model": "token_transfers", "measures": ["transfer_count"], "dimensions": ["token_address"],
        "window": {"name": "yesterday"}, "order_by": [{"field": "transfer_count", "direction": "desc"}], "limit": 5})
    tree = sqlglot.parse_one(compiled.sql, read="bigquery")
    assert len(list(tree.find_all(exp.Select))) == 1
    assert [t.sql(dialect="bigquery") for t in tree.find_all(exp.Table)] == [f"`{DATASET}.token_transfers`"]
    assert "ieee_divide" not in compiled.sql.lower() and tree.args["limit"]


@pytest.mark.parametrize("value, condition", [(False, "trace_address IS NULL"), (True, "NOT trace_address IS NULL")])
def test_a_filter_on_a_boolean_dimension_reads_as_its_condition(value, condition, semantic_model):
    compiled = semantic_model.compile({"model": "traces", "measures": ["trace_count"], "dimensions": [],
                                       "filters": [{"field": "is_internal", "op": "=", "value": value}]})
    where = sqlglot.parse_one(compiled.sql, read="bigquery").args["where"].this
    assert where.sql(dialect="bigquery") == condition


def test_a_view_joins_only_the_tables_a_query_reads(semantic_model):
    by_symbol = semantic_model.compile({
        "model": "token_transfers", "measures": ["total_amount"], "dimensions": ["token_symbol"],
        "window": {"name": "last_n_days", "n": 7}, "filters": [{"field": "token_symbol", "op": "=", "value": "USDC"}]})
    assert tables_read(by_symbol.sql) == {f"{DATASET}.token_transfers", f"{DATASET}.tokens"}
    assert "SAFE_CAST(token_transfers.value AS BIGNUMERIC)" in by_symbol.sql


def test_the_reading_says_what_was_measured_and_how(semantic_model):
    compiled = semantic_model.compile(SemanticQuery(
        model="transactions", measures=["failed_share"], dimensions=["day"], window={"name": "last_n_days", "n": 7}))
    assert compiled.reading == ("failed share of transactions, a fraction (0-1); window: the 7 full UTC days before "
                                "today; grouped by day")


@pytest.mark.parametrize("query, reason", [
    ({"model": "swaps", "measures": ["swap_count"]}, "unknown model 'swaps'"),
    ({"model": "transactions", "measures": ["failed_ratio"]}, "failed_ratio"),
    ({"model": "transactions", "measures": ["transaction_count"], "dimensions": ["symbol"]}, "symbol"),
    ({"model": "transactions", "measures": ["transaction_count"], "window": {"name": "last_n_days"}},
     "window 'last_n_days' takes its parameter n"),
    ({"model": "transactions", "measures": ["transaction_count"], "window": {"name": "fortnight"}},
     "unknown window 'fortnight'"),
    ({"model": "balances", "measures": ["address_count"], "window": {"name": "yesterday"}}, "no time column"),
    ({"model": "transactions", "measures": ["transaction_count"],
      "filters": [{"field": "symbol", "op": "=", "value": "USDC"}]}, "filter on 'symbol'"),
    ({"model": "transactions", "measures": ["transaction_count"],
      "filters": [{"field": "status", "op": "=", "value": [0, 1]}]}, "needs one value"),
    ({"model": "transactions", "measures": ["transaction_count"],
      "order_by": [{"field": "day", "direction": "asc"}]}, "not selected"),
    ({"model": "transactions", "measures": ["transaction_count"],
      "filters": [{"field": "status", "op": "=", "value": "failed"}]}, "not comparable"),
    ({"model": "transactions", "measures": ["transaction_count"], "rows": 3}, "rows"),
    ({"model": "transactions"}, "at least one dimension or measure"),
    ({"model": "transactions", "measures": ["transaction_count"], "dimensions": ["transaction_type"],
      "running_total": True}, "a time dimension to run over"),
    ({"model": "transactions", "measures": ["transaction_count"], "average_per": "day", "running_total": True,
      "dimensions": ["day"]}, "cannot be asked together"),
    ({"model": "balances", "measures": ["address_count"], "average_per": "day"}, "a model with a time column"),
    ({"model": "transactions", "measures": ["transaction_count"], "share_of_total": True}, "a dimension whose rows"),
    ({"model": "transactions", "measures": ["failed_share"], "dimensions": ["transaction_type"],
      "share_of_total": True}, "does not add up"),
    ({"model": "transactions", "measures": ["transaction_count"], "dimensions": ["transaction_type", "day"],
      "share_of_total": True, "running_total": True}, "cannot be asked together"),
    ({"model": "transactions", "measures": ["transaction_count"], "dimensions": ["hour_of_day"],
      "moving_average": 7}, "a day, week or month dimension"),
    ({"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"], "moving_average": 7,
      "running_total": True}, "cannot be asked with a running total"),
    ({"model": "transactions", "measures": ["transaction_count"], "limit": 5,
      "order_by": [{"field": "transaction_count", "direction": "desc"}]}, "from_address, to_address"),
])
def test_a_rejected_query_says_why_in_one_line(query, reason, semantic_model):
    with pytest.raises(SemanticQueryError) as raised:
        semantic_model.compile(query)
    message = str(raised.value)
    assert reason in message and "\n" not in message


def test_a_query_in_percent_gives_fraction_measures_times_100(semantic_model):
    """The twin of a fraction measure is 100 times it, named and read as a percentage; other measures stay."""
    query = {"model": "blocks", "measures": ["avg_fullness", "block_count"], "dimensions": [],
             "window": {"name": "yesterday"}, "order_by": [{"field": "avg_fullness", "direction": "desc"}]}
    as_fraction = semantic_model.compile(query)
    in_percent = semantic_model.compile({**query, "percent": True})
    names = [p.alias_or_name for p in sqlglot.parse_one(in_percent.sql, read="bigquery").selects]
    assert names == ["avg_fullness_percentage", "block_count"]
    assert "100" in in_percent.sql and "100" not in as_fraction.sql
    assert "a percentage (0-100)" in in_percent.reading and "a fraction (0-1)" in as_fraction.reading


def test_a_fraction_whose_percentage_the_model_declares_takes_that_measure(semantic_model):
    query = {"model": "transactions", "measures": ["failed_share"], "dimensions": [], "window": None, "percent": True}
    twin = {"model": "transactions", "measures": ["failed_percentage"], "dimensions": [], "window": None}
    assert semantic_model.compile(query).sql == semantic_model.compile(twin).sql


def test_the_percentage_twins_are_not_in_the_catalog_or_the_grammar(semantic_model):
    blocks = next(m for m in semantic_model.catalog()["models"] if m["name"] == "blocks")
    assert "avg_fullness_percentage" not in {m["name"] for m in blocks["measures"]}
    assert "avg_fullness_percentage" not in json.dumps(semantic_model.json_schema())


def test_a_running_total_runs_over_the_time_dimension_within_each_other_value(semantic_model, run_pinned):
    """Each measure's running total sits beside it, summed in time order and started anew for each transaction type
    (ibis writes the window)."""
    query = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["transaction_type", "day"],
             "window": {"name": "last_n_days", "n": 7}, "running_total": True}
    compiled = semantic_model.compile(query)
    columns, rows = run_pinned(compiled.sql)
    assert columns == ["transaction_type", "day", "transaction_count", "transaction_count_running_total"]
    assert "with running totals over day" in compiled.reading
    for kind in {row[0] for row in rows}:
        own = sorted((row for row in rows if row[0] == kind), key=lambda row: row[1])
        assert [row[3] for row in own] == [sum(r[2] for r in own[:i + 1]) for i in range(len(own))]


def test_a_moving_average_reads_the_periods_before_the_window(semantic_model, run_pinned):
    """Each day's 7-day moving average is the mean of its own count and the 6 days' before it, the days before the
    window's first included (read, not shown); the rows are the window's 14 days."""
    query = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["day"],
             "window": {"name": "last_n_days", "n": 14}, "moving_average": 7}
    compiled = semantic_model.compile(query)
    columns, rows = run_pinned(compiled.sql)
    _, earlier = run_pinned(semantic_model.compile({**query, "window": {"name": "last_n_days", "n": 20},
                                                    "moving_average": None}).sql)
    counts = [count for _, count in sorted(earlier)]
    assert columns == ["day", "transaction_count", "transaction_count_moving_average"]
    assert [row[:2] for row in rows] == sorted(earlier)[6:] and len(rows) == 14
    assert [pytest.approx(float(row[2])) for row in rows] == [sum(counts[i:i + 7]) / 7 for i in range(14)]
    assert "with 7-day moving averages" in compiled.reading


def test_a_moving_average_over_the_whole_table_reads_no_further(semantic_model, run_pinned):
    query = {"model": "blocks", "measures": ["block_count"], "dimensions": ["day"], "window": None,
             "moving_average": 3}
    _, rows = run_pinned(semantic_model.compile(query).sql)
    counts = [row[1] for row in rows]
    assert [pytest.approx(float(row[2])) for row in rows] == [
        sum(counts[max(0, i - 2):i + 1]) / len(counts[max(0, i - 2):i + 1]) for i in range(len(rows))]


def test_a_share_of_the_total_is_of_every_row_found_before_the_limit(semantic_model, run_pinned):
    """Each type's count over the count of all types, in percent: the first 2 types' shares are of every
    transaction, not of those 2 types' (ibis writes the window over the grouped rows), named and read as shares."""
    query = {"model": "transactions", "measures": ["total_value_eth"], "dimensions": ["transaction_type"],
             "window": {"name": "last_n_days", "n": 7}, "order_by": [{"field": "total_value_eth", "direction": "desc"}],
             "limit": 2, "share_of_total": True, "percent": True}
    compiled = semantic_model.compile(query)
    columns, rows = run_pinned(compiled.sql)
    _, totals = run_pinned(semantic_model.compile({**query, "share_of_total": False, "percent": False,
                                                   "limit": None}).sql)
    everything = sum(float(value) for _, value in totals)
    assert columns == ["transaction_type", "total_value_eth_percent_of_total"] and len(totals) > 2
    assert [(kind, pytest.approx(float(share))) for kind, share in rows] == [
        (kind, 100 * float(value) / everything) for kind, value in totals[:2]]
    assert "share of the total ETH transferred in transactions, a percentage (0-100)" in compiled.reading
    _, fractions = run_pinned(semantic_model.compile({**query, "percent": False, "limit": None}).sql)
    assert sum(float(share) for _, share in fractions) == pytest.approx(1)


def test_an_average_per_hour_over_a_fixed_window_divides_by_its_hours(semantic_model, run_pinned):
    """The last 3 days span 72 hours, whether or not each holds a transaction: each type's count over 72, one
    aggregate as an analyst writes it, named and read as an average; its order and limit apply to the averages."""
    query = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["transaction_type"],
             "window": {"name": "last_n_days", "n": 3}, "average_per": "hour",
             "order_by": [{"field": "transaction_count", "direction": "desc"}], "limit": 2}
    compiled = semantic_model.compile(query)
    columns, rows = run_pinned(compiled.sql)
    _, totals = run_pinned(semantic_model.compile({**query, "average_per": None, "limit": None}).sql)
    assert columns == ["transaction_type", "avg_transaction_count_per_hour"]
    assert [(kind, pytest.approx(float(mean))) for kind, mean in rows] == [(kind, n / 72) for kind, n in totals[:2]]
    assert "COUNT(*) / 72" in compiled.sql and sqlglot.parse_one(compiled.sql, read="bigquery").find(exp.Subquery) is None
    assert "number of transactions, a count, averaged per hour" in compiled.reading


def test_an_average_per_day_split_by_weekday_averages_the_days_present(semantic_model, run_pinned):
    """Split by weekday, the days of each are not known from the window: each day's count, averaged per weekday."""
    query = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["weekday"],
             "window": {"name": "last_n_days", "n": 14}, "average_per": "day"}
    columns, rows = run_pinned(semantic_model.compile(query).sql)
    _, daily = run_pinned(semantic_model.compile({**query, "dimensions": ["weekday", "day"], "average_per": None}).sql)
    counts: dict = {}
    for weekday, _, count in daily:
        counts.setdefault(weekday, []).append(count)
    assert columns == ["weekday", "avg_transaction_count_per_day"]
    assert {weekday: pytest.approx(float(mean)) for weekday, mean in rows} == {
        weekday: sum(c) / len(c) for weekday, c in counts.items()}


def test_a_window_of_fixed_length_knows_its_periods(semantic_model):
    """What an average per period divides by; a window whose length varies (today so far, a calendar month) has none."""
    windows = semantic_model.windows
    assert windows["last_n_days"].periods(1, 3) == 72 and windows["last_n_days"].periods(24, 3) == 3
    assert windows["yesterday"].periods(1, None) == 24 and windows["last_n_hours"].periods(1, 6) == 6
    assert windows["last_n_weeks"].periods(24, 2) == 14 and windows["last_n_days"].periods(168, 3) is None
    assert {name for name, w in windows.items() if w.hours is None} >= {"none", "today", "this_week"}


@pytest.mark.parametrize("query", [
    {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["to_address"], "limit": 5},
    {"model": "transactions", "dimensions": ["hash", "value_eth"], "limit": 5},  # a listing of rows
    {"model": "transactions", "measures": ["transaction_count"], "limit": 1},  # one row, as asked
])
def test_a_limit_stands_where_it_limits_rows(query, semantic_model):
    assert "LIMIT" in semantic_model.compile(query).sql
