"""`askchain index ...`: build the retrieval indexes ahead of time (they are otherwise built on first use)."""

from __future__ import annotations

import time
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Build retrieval indexes: few-shot examples, database values.")


@app.command()
def examples():
    """Embed the whole few-shot pool's question skeletons (examples_scope: all) into the vector store, only new or
    changed entries; `askchain prepare` syncs the examples of the database a question is asked about."""
    from askchain.config import get_settings
    from askchain.retrieval.examples import build_example_index

    settings = get_settings()
    started = time.perf_counter()
    synced = build_example_index(settings)
    typer.echo(f"{synced.entries} examples indexed ({synced.added} newly embedded) in {time.perf_counter() - started:.1f} s")


@app.command()
def values(db: Optional[str] = typer.Option(None, "--db", help="Database file or URL. Default: the local Ethereum dataset.")):
    """Index the distinct text values of a database's name-like and low-cardinality columns."""
    from askchain.db.connect import resolve_database
    from askchain.config import get_settings
    from askchain.retrieval.values import load_value_index

    settings = get_settings()
    started = time.perf_counter()
    index = load_value_index(resolve_database(db, settings), settings)
    typer.echo(f"{len(index.values)} values from {len(index.columns)} columns in {time.perf_counter() - started:.1f} s")
