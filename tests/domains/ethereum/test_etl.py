"""ethereum-etl exports (real mainnet samples from ethereum-etl's tests) load into the same schema."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from askchain.domains.ethereum.etl import load_etl
from askchain.errors import DatasetError


@pytest.fixture
def samples(etl_samples):
    """The shared data's ethereum-etl samples (etl_samples marks the test shared_data)."""
    return etl_samples


def test_stream_export_of_two_mainnet_blocks(samples, tmp_path):
    counts = load_etl(samples / "test_stream" / "blocks_17173049_17173050", tmp_path / "eth.duckdb")
    assert counts["blocks"] == 2 and counts["transactions"] == 298 and counts["logs"] == 681 and counts["token_transfers"] == 291
    con = duckdb.connect(str(tmp_path / "eth.duckdb"), read_only=True)
    # transaction counts agree with the blocks, receipts are in, withdrawals are structs
    assert con.execute("""SELECT COUNT(*) FROM blocks b JOIN (SELECT block_number, COUNT(*) n FROM transactions GROUP BY 1) t
                          ON t.block_number = b.number WHERE t.n != b.transaction_count""").fetchone()[0] == 0
    assert con.execute("SELECT COUNT(*) FROM transactions WHERE receipt_status IS NULL").fetchone()[0] == 0
    assert con.execute("SELECT len(withdrawals), withdrawals[1].validator_index FROM blocks ORDER BY number LIMIT 1").fetchone() == (16, 540230)
    assert con.execute("SELECT CAST(timestamp AS VARCHAR) FROM blocks WHERE number = 17173049").fetchone()[0] == "2023-05-02 12:19:59"
    assert con.execute("SELECT value FROM token_transfers WHERE log_index = 1 AND block_number = 17173049").fetchone()[0] == \
        "150188698577042438264952193024"
    con.close()


def test_all_samples_merge_receipts_and_fill_block_fields_idempotently(samples, tmp_path):
    db = tmp_path / "eth.duckdb"
    first = load_etl(samples, db)
    assert load_etl(samples, db) == first  # loading again adds nothing
    con = duckdb.connect(str(db), read_only=True)
    # receipts from the receipts job land on the transactions of the blocks job (block 483920)
    assert con.execute("SELECT COUNT(receipt_gas_used) FROM transactions WHERE block_number = 483920").fetchone()[0] == 4
    # CSV token transfers carry only block_number; timestamp and hash come from blocks
    assert con.execute("SELECT COUNT(*) FROM token_transfers WHERE block_number = 483920 AND block_timestamp IS NOT NULL").fetchone()[0] == 2
    assert con.execute("SELECT is_erc721 FROM contracts WHERE address = '0x06012c8cf97bead5deae237070f9587f8e7a266d'").fetchone()[0]
    assert con.execute("SELECT trace_address FROM traces WHERE trace_id LIKE 'call_0xea1093d4%' ORDER BY 1 NULLS FIRST").fetchall() == [(None,), ("0",)]
    con.close()


def test_malformed_files_name_file_and_line(samples, tmp_path):
    bad = tmp_path / "export"
    shutil.copytree(samples / "test_stream" / "blocks_1755634_1755635", bad)
    with open(bad / "expected_logs.json", "a") as f:
        f.write("{not json\n")
    with pytest.raises(DatasetError, match=r"expected_logs\.json:3: not valid JSON"):
        load_etl(bad, tmp_path / "a.duckdb")
    (bad / "expected_logs.json").unlink()
    (bad / "blocks.csv").write_text("number,hash,timestamp\nabc,0x01,1\n")
    with pytest.raises(DatasetError, match=r"blocks\.csv:2: bad value for 'number'"):
        load_etl(bad, tmp_path / "b.duckdb")
    (bad / "blocks.csv").write_text("number,hash\n5,\n")
    with pytest.raises(DatasetError, match=r"blocks\.csv:2: missing required field 'hash'"):
        load_etl(bad, tmp_path / "c.duckdb")


def test_not_an_export_directory(tmp_path):
    with pytest.raises(DatasetError, match="no ethereum-etl exports"):
        load_etl(tmp_path, tmp_path / "x.duckdb")
    with pytest.raises(DatasetError, match="not a directory"):
        load_etl(tmp_path / "missing", tmp_path / "x.duckdb")
