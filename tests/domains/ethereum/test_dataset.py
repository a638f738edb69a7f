"""The synthetic chain is internally consistent, ends where asked and is deterministic."""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import pytest

from askchain.db.duckdb import connect_read_only
from askchain.domains.ethereum.dataset import build_dataset, utc_today
from askchain.domains.ethereum.simulate import GAS_TARGET
from askchain.domains.ethereum.tables import tables
from askchain.errors import DatasetError

FQ = "`bigquery-public-data.crypto_ethereum.{}`"
B, TX, L, TT, TR, C, TK, BAL = (FQ.format(t) for t in ("blocks", "transactions", "logs", "token_transfers", "traces", "contracts", "tokens", "balances"))


def test_every_table_has_rows_and_the_bigquery_columns(eth_db):
    path, counts = eth_db
    assert all(counts[name] > 0 for name in tables()), counts
    con = connect_read_only(path)  # the session's engine may hold the file open with this configuration
    for name, spec in tables().items():
        assert [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()] == spec.column_names()
    types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'logs'").fetchall())
    assert types["topics"] == "VARCHAR[]" and types["block_timestamp"] == "TIMESTAMP"
    assert "STRUCT" in con.execute("SELECT data_type FROM duckdb_columns() WHERE column_name = 'withdrawals'").fetchone()[0]
    assert con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'blocks' AND column_name = 'miner'").fetchone()[0]
    con.close()


def test_window_ends_before_today_and_spans_the_days(sql):
    first, last = sql(f"SELECT MIN(DATE(timestamp)), MAX(DATE(timestamp)) FROM {B}")[0]
    assert last == utc_today() - timedelta(days=1)
    assert first == utc_today() - timedelta(days=45)


def test_transactions_sit_in_their_blocks(sql):
    assert sql(f"""SELECT COUNT(*) FROM {B} b LEFT JOIN (
                     SELECT block_number, COUNT(*) n, SUM(receipt_gas_used) g, MAX(transaction_index) mx,
                            MAX(receipt_cumulative_gas_used) cum FROM {TX} GROUP BY block_number) t ON t.block_number = b.number
                   WHERE COALESCE(t.n, 0) != b.transaction_count OR COALESCE(t.g, 0) != b.gas_used
                      OR COALESCE(t.mx, -1) != b.transaction_count - 1 OR COALESCE(t.cum, 0) != b.gas_used""")[0][0] == 0
    assert sql(f"""SELECT COUNT(*) FROM {TX} t JOIN {B} b ON b.number = t.block_number
                   WHERE t.block_hash != b.hash OR t.block_timestamp != b.timestamp""")[0][0] == 0
    assert sql(f"SELECT COUNT(*) - COUNT(DISTINCT hash) FROM {TX}")[0][0] == 0


def test_base_fee_follows_eip1559_between_generated_blocks(sql):
    rows = sql(f"SELECT base_fee_per_gas, gas_used FROM {B} ORDER BY number")
    for (fee, used), (next_fee, _) in zip(rows, rows[1:]):
        if used > GAS_TARGET:
            expected = fee + max(fee * (used - GAS_TARGET) // GAS_TARGET // 8, 1)
        else:
            expected = fee - fee * (GAS_TARGET - used) // GAS_TARGET // 8
        assert next_fee == max(expected, 7)


def test_fees_are_consistent(sql):
    assert sql(f"""SELECT COUNT(*) FROM {TX} t JOIN {B} b ON b.number = t.block_number
                   WHERE t.receipt_effective_gas_price < b.base_fee_per_gas
                      OR (t.transaction_type = 2 AND t.receipt_effective_gas_price > t.max_fee_per_gas)""")[0][0] == 0


def test_token_transfers_mirror_transfer_logs(sql):
    logs = sql(f"""SELECT transaction_hash, log_index, address, topics, data FROM {L}
                   WHERE topics[SAFE_OFFSET(0)] = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'""")
    transfers = {(r[4], r[5]): r for r in sql(f"SELECT token_address, from_address, to_address, value, transaction_hash, log_index FROM {TT}")}
    assert len(logs) == len(transfers) > 0
    for tx_hash, index, address, topics, data in logs:
        token, sender, receiver, value, *_ = transfers[(tx_hash, index)]
        assert token == address and sender == "0x" + topics[1][26:] and receiver == "0x" + topics[2][26:]
        words = topics[3:] + ([data] if data != "0x" else [])
        assert len(words) == 1 and int(words[0], 16) == int(value)


def test_contracts_come_from_create_traces_and_tokens_from_contracts(sql):
    first_block = sql(f"SELECT MIN(number) FROM {B}")[0][0]
    created = set(sql(f"SELECT to_address FROM {TR} WHERE trace_type = 'create' AND status = 1"))
    in_window = set(sql(f"SELECT address FROM {C} WHERE block_number >= {first_block}"))
    assert created == in_window and created
    assert sql(f"""SELECT COUNT(*) FROM {TK} t LEFT JOIN {C} c ON c.address = t.address
                   WHERE c.address IS NULL OR NOT (c.is_erc20 OR c.is_erc721)""")[0][0] == 0
    assert sql(f"SELECT COUNT(*) FROM {TX} WHERE to_address IS NULL AND receipt_status = 1 AND receipt_contract_address IS NULL")[0][0] == 0


def test_well_known_tokens(sql):
    rows = dict(sql(f"SELECT symbol, decimals FROM {TK} WHERE symbol IN ('USDT', 'USDC', 'WETH', 'DAI')"))
    assert rows == {"USDT": "6", "USDC": "6", "WETH": "18", "DAI": "18"}


def test_balances_cover_spending(sql):
    """Opening balance = final balance minus the window's net flows; it must never be negative."""
    flows = f"""
        SELECT to_address AS address, value AS delta FROM {TR} WHERE status = 1 AND (call_type = 'call' OR trace_type = 'create')
        UNION ALL SELECT from_address, -value FROM {TR} WHERE status = 1 AND (call_type = 'call' OR trace_type = 'create')
        UNION ALL SELECT from_address, -(CAST(receipt_gas_used AS NUMERIC) * receipt_effective_gas_price
                                         + COALESCE(CAST(receipt_blob_gas_used AS NUMERIC) * receipt_blob_gas_price, 0)) FROM {TX}
        UNION ALL SELECT b.miner, CAST(t.receipt_gas_used AS NUMERIC) * (t.receipt_effective_gas_price - b.base_fee_per_gas)
                  FROM {TX} t JOIN {B} b ON b.number = t.block_number
        UNION ALL SELECT w.address, CAST(w.amount AS NUMERIC) * 1000000000 FROM {B}, UNNEST(withdrawals) AS w"""
    missing, negative = sql(f"""SELECT COUNTIF(bal.address IS NULL), COUNTIF(bal.eth_balance - f.net < 0)
                                FROM (SELECT address, SUM(delta) AS net FROM ({flows}) GROUP BY address) f
                                LEFT JOIN {BAL} bal ON bal.address = f.address""")[0]
    assert missing == 0 and negative == 0


def _fingerprint(path) -> list:
    con = duckdb.connect(str(path), read_only=True)
    out = [con.execute(f"SELECT count(*), sum(hash(t::VARCHAR)) FROM {name} t").fetchone() for name in tables()]
    con.close()
    return out


def test_same_seed_same_data_other_seed_other_data(tmp_path):
    args = dict(days=2, end=date(2026, 1, 15), scale=0.001, progress=False)
    build_dataset(tmp_path / "a.duckdb", seed=3, **args)
    build_dataset(tmp_path / "b.duckdb", seed=3, **args)
    build_dataset(tmp_path / "c.duckdb", seed=4, **args)
    assert _fingerprint(tmp_path / "a.duckdb") == _fingerprint(tmp_path / "b.duckdb")
    assert _fingerprint(tmp_path / "a.duckdb") != _fingerprint(tmp_path / "c.duckdb")


@pytest.mark.parametrize("kwargs", [dict(days=0), dict(scale=0), dict(scale=2)])
def test_bad_parameters(tmp_path, kwargs):
    with pytest.raises(DatasetError):
        build_dataset(tmp_path / "x.duckdb", progress=False, **kwargs)
