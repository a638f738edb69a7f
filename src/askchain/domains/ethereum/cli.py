"""`askchain eth`: build the synthetic local dataset, load real ethereum-etl exports, sync from a JSON-RPC node, and
say what a local copy holds."""

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


TRACE_CHOICES = ("auto", "trace_block", "debug_traceBlockByNumber", "none")


@app.command()
def sync(
    rpc: str = typer.Option(..., "--rpc", help="The node's JSON-RPC URL (http or https): your own node or a provider's."),
    last_days: Optional[int] = typer.Option(None, "--last-days", help="A new file starts at 00:00 UTC this many days before today (1: yesterday whole and today so far)."),
    from_block: Optional[int] = typer.Option(None, "--from-block", help="A new file starts at this block."),
    to_block: Optional[int] = typer.Option(None, "--to-block", help="Stop at this block (default: the node's newest)."),
    out: Optional[Path] = typer.Option(None, "--out", help="DuckDB file to create or continue (default: the dataset `askchain ask` uses; a simulated one there is replaced)."),
    chain_id: Optional[int] = typer.Option(None, "--chain-id", help="Refuse a node serving another chain (1: mainnet)."),
    rate_limit: Optional[int] = typer.Option(None, "--rate-limit", help="JSON-RPC calls per second at most (default: eth_sync.max_calls_per_second; 0: none)."),
    traces: Optional[str] = typer.Option(None, "--traces", help="auto, trace_block, debug_traceBlockByNumber or none (default: eth_sync.traces)."),
    balances: Optional[bool] = typer.Option(None, "--balances/--no-balances", help="Fetch eth_getBalance for every address the synced blocks touched: one call each, hours of a mainnet day on a rate-limited provider (default: eth_sync.balances, off)."),
    stats: bool = typer.Option(False, "--stats", help="Print the throughput: blocks/s, transactions/s, RPC calls per block."),
):
    """Sync blocks, transactions, receipts, logs, token transfers, traces, contracts, tokens (and with --balances,
    balances) from an Ethereum JSON-RPC node into the local crypto_ethereum copy; a second run continues where the
    first stopped."""
    from askchain.config import get_settings
    from askchain.domains.ethereum.sync.run import SyncRequest, sync as run_sync

    if last_days is not None and from_block is not None:
        raise DatasetError("give --last-days or --from-block, not both")
    if traces is not None and traces not in TRACE_CHOICES:
        raise DatasetError(f"--traces must be one of {', '.join(TRACE_CHOICES)}, not '{traces}'")
    if min(v for v in (from_block, to_block, rate_limit, 0) if v is not None) < 0:
        raise DatasetError("block numbers and --rate-limit cannot be negative")
    path = _out(out)
    request = SyncRequest(rpc, path, last_days, from_block, to_block, chain_id, rate_limit, traces, balances)
    report = run_sync(request, get_settings().eth_sync)
    for note in report.notes:
        typer.echo(f"note: {note}", err=True)
    written = f"blocks {report.first:,} to {report.last:,}" if report.first is not None else "no new blocks"
    typer.echo(f"{path}: {written} ({report.transactions:,} transactions) in {report.seconds:.1f} s")
    _print_counts(path, report.counts)
    typer.echo(_freshness_line(path))
    if stats:
        typer.echo(_stats_line(report))


def _stats_line(report) -> str:
    blocks, seconds = max(report.blocks, 1), max(report.seconds, 1e-9)
    return (f"stats: {report.blocks:,} blocks, {report.transactions:,} transactions in {report.seconds:.2f} s: "
            f"{report.blocks / seconds:,.1f} blocks/s, {report.transactions / seconds:,.1f} tx/s, "
            f"{report.calls / blocks:.1f} RPC calls per block ({report.calls:,} calls in {report.requests:,} HTTP "
            f"requests, {report.retried} retried)")


def _freshness_line(path: Path) -> str:
    import duckdb

    from askchain.domains.ethereum.freshness import read_freshness, utc_today

    with duckdb.connect(str(path), read_only=True) as con:
        fresh = read_freshness(con, path)
    return fresh.text(utc_today(), balances=True) if fresh else "no blocks"


@app.command()
def status(
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB file (default: the dataset `askchain ask` uses)."),
):
    """What a local crypto_ethereum copy holds: its block range, its newest block's time, rows per table, and for a
    synced file where it came from."""
    import duckdb

    from askchain.domains.ethereum.freshness import read_freshness, utc_today

    path = _out(db)
    if not path.is_file():
        raise DatasetError(f"{path} does not exist (askchain eth build or askchain eth sync writes it)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise DatasetError(f"cannot open {path} as a DuckDB database: {str(exc).splitlines()[0]}") from None
    with con:
        fresh = read_freshness(con, path)
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1").fetchall()]
        counts = {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables}
        synced = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'askchain_sync'").fetchone()[0]
        meta = dict(con.execute("SELECT key, value FROM askchain_sync.meta ORDER BY key").fetchall()) if synced else {}
    typer.echo(str(path))
    if fresh:
        typer.echo(f"blocks {fresh.first_block:,} to {fresh.last_block:,}; newest block at {fresh.last_time:%Y-%m-%d %H:%M:%S} UTC")
        typer.echo(fresh.text(utc_today(), balances=True))
    for name, n in counts.items():
        typer.echo(f"  {name:<16} {n:>14,}")
    if meta:
        typer.echo("synced from " + ", ".join(f"{k} {v}" for k, v in meta.items()))
