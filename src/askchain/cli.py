"""The `askchain` command: a thin layer over the Python API. Errors print one line and exit 2."""

from __future__ import annotations

import json
import os
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table as RichTable

from askchain.errors import AskchainError, describe

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Answer questions in plain English over SQL databases.")
console = Console()
err_console = Console(stderr=True, soft_wrap=True)

DB_HELP = "Database: a SQLite/DuckDB file path or a URL (postgresql://…, bigquery://PROJECT). Default: the local Ethereum dataset."


def _settings(model: str | None = None):
    from askchain.config import get_settings

    settings = get_settings()
    return settings.with_overrides(llm={"model": model}) if model else settings


def print_rows(columns: list[str], rows: list, limit: int = 50, title: str | None = None) -> None:
    table = RichTable(title=title, show_lines=False)
    for column in columns:
        table.add_column(str(column))
    for row in rows[:limit]:
        table.add_row(*("NULL" if v is None else str(v) for v in row))
    console.print(table)
    if len(rows) > limit:
        console.print(f"… {len(rows) - limit} more rows")


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in plain English."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="baseline, self-consistency or pipeline (default: settings, pipeline)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (see README)."),
    hint: str = typer.Option("", "--hint", help="Extra knowledge for the question (like BIRD's evidence)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
):
    """Answer a question: write SQL, run it read-only, print SQL, rows and timing."""
    from askchain.api import ask as ask_question

    result = ask_question(question, db, method=method, model=model, hint=hint, settings=_settings(model))
    if as_json:
        print(json.dumps(result.public(), default=str))
    else:
        if result.sql:
            console.print(Syntax(result.sql, "sql", word_wrap=True))
        if result.error:
            err_console.print(f"[red]error:[/red] {result.error}")
        else:
            print_rows(result.columns, result.rows)
        u = result.usage
        console.print(
            f"[dim]{result.elapsed_s:.1f} s · {u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} "
            f"completion tokens · {result.model} · {result.method}[/dim]"
        )
    raise typer.Exit(1 if result.error else 0)


@app.command()
def sql(
    statement: str = typer.Argument(..., help="One read-only SQL statement."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print {columns, rows, elapsed_s, truncated} as JSON."),
    max_rows: Optional[int] = typer.Option(None, "--max-rows", help="Row cap (default from settings)."),
):
    """Run one statement through the safe executor (refusals exit with code 2)."""
    from askchain.db.connect import resolve_database

    engine = resolve_database(db, _settings())
    result = engine.execute(statement, max_rows=max_rows)
    if as_json:
        print(json.dumps(result.as_dict(), default=str))
    else:
        print_rows(result.columns, result.rows)
        console.print(f"[dim]{len(result.rows)} rows{' (truncated)' if result.truncated else ''} in {result.elapsed_s:.3f} s[/dim]")


def _add_subcommands() -> None:
    """Sub-apps live beside the stage they drive; each is optional so a partial install still works. Installed
    domains add theirs under their command word (`askchain eth ...`)."""
    import importlib

    from askchain.domain import all_domains

    for module, name in (
        ("askchain.eval.cli", "eval"),
        ("askchain.retrieval.cli", "index"),
        ("askchain.server.cli", None),
        ("askchain.mcp_server.cli", None),
        ("askchain.pipeline.cli", None),
        ("askchain.eval.bench", None),
    ):
        try:
            sub = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("askchain"):
                continue
            raise
        if name:
            app.add_typer(sub.app, name=name)
        else:
            sub.register(app)
    for domain in all_domains():
        domain_app = domain.cli()
        if domain_app:
            app.add_typer(domain_app, name=domain.command)


_add_subcommands()


def main() -> None:
    try:
        app(standalone_mode=False)
    except AskchainError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    except Exception as exc:
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # typer/click usage errors: bad flag, missing argument
            exc.show()
            sys.exit(exc.exit_code)
        # A bug, not bad input: one line and exit 1. Read from the environment, not settings, since loading the
        # settings may be what failed.
        if os.environ.get("ASKCHAIN_DEBUG", "") not in ("", "0"):
            raise
        err_console.print(f"[red]error:[/red] internal error: {escape(describe(exc))}", highlight=False)
        sys.exit(1)


if __name__ == "__main__":
    main()
