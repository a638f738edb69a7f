"""`askchain eth`: build the synthetic local dataset or load real ethereum-etl exports."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Optional

import typer

from askchain.errors import DatasetError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="The local Ethereum (crypto_ethereum) dataset.")


def _out(out: Optional[Path]) -> Path:
    if out:
        return out
    from askchain.config import get_settings
    from askchain.domains.ethereum.dataset import dataset_path

    return dataset_path(get_settings())


def _print_counts(path: Path, counts: dict[str, int]) -> None:
    typer.echo(f"{path}: " + ", ".join(f"{name} {n:,}" for name, n in counts.items()))


@app.command()
def build(
    days: int = typer.Option(365, "--days", help="Full UTC days of data, ending the day before --end."),
    end: Optional[str] = typer.Option(None, "--end", help="Snapshot date YYYY-MM-DD (default: today, UTC); data stops at its 00:00 UTC."),
    scale: float = typer.Option(0.004, "--scale", help="Fraction of mainnet blocks to generate (0.004 ≈ 1.6M transactions a year; 0.1 ≈ 40M)."),
    seed: int = typer.Option(7, "--seed", help="Random seed; the same seed and end date give the same data."),
    out: Optional[Path] = typer.Option(None, "--out", help="DuckDB file to write (default: the dataset `askchain ask` uses)."),
):
    """Build the synthetic crypto_ethereum copy (BigQuery's schema, realistic shape)."""
    from askchain.domains.ethereum.dataset import build_dataset

    try:
        end_date = date.fromisoformat(end) if end else None
    except ValueError:
        raise DatasetError(f"--end must be a date like 2025-12-31, not '{end}'") from None
    path = _out(out)
    _print_counts(path, build_dataset(path, days=days, end=end_date, scale=scale, seed=seed, progress=True))


@app.command("load-etl")
def load_etl_command(
    directory: Path = typer.Argument(..., help="Folder with ethereum-etl exports (blocks.csv, transactions.json, ...)."),
    out: Optional[Path] = typer.Option(None, "--out", help="DuckDB file to create or append to (default: the local dataset)."),
):
    """Load ethereum-etl CSV / JSON-lines exports into the crypto_ethereum schema."""
    from askchain.domains.ethereum.dataset import forget_build
    from askchain.domains.ethereum.etl import load_etl

    path = _out(out)
    counts = load_etl(directory, path)
    forget_build(path)  # real data now: never rebuild this file automatically
    _print_counts(path, counts)
