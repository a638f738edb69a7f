"""`askchain eth build` and `askchain eth load-etl`: bad input is a one-line error."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

from askchain.domains.ethereum.cli import app
from askchain.errors import DatasetError

runner = CliRunner()


def test_build_writes_the_dataset(tmp_path):
    out = tmp_path / "eth.duckdb"
    result = runner.invoke(app, ["build", "--days", "1", "--end", "2026-02-01", "--scale", "0.001", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "transactions" in result.output
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT MAX(timestamp) < TIMESTAMP '2026-02-01' FROM blocks").fetchone()[0]
    con.close()


def test_bad_end_date(tmp_path):
    result = runner.invoke(app, ["build", "--end", "yesterday", "--out", str(tmp_path / "x.duckdb")])
    assert isinstance(result.exception, DatasetError) and "--end" in str(result.exception)


def test_load_etl_bad_directory(tmp_path):
    result = runner.invoke(app, ["load-etl", str(tmp_path / "missing"), "--out", str(tmp_path / "x.duckdb")])
    assert isinstance(result.exception, DatasetError)


def test_main_prints_one_line(tmp_path, capsys, monkeypatch):
    from askchain import cli

    monkeypatch.setattr("sys.argv", ["askchain", "eth", "load-etl", str(tmp_path / "missing"), "--out", str(tmp_path / "x.duckdb")])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and "Traceback" not in err
