"""The `askchain` command: a thin layer over the Python API. Errors print one line and exit 2."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table as RichTable
from rich.text import Text

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
    """The rows as a table; names and values are shown as they are, never read as markup ("[/b]" is data)."""
    table = RichTable(title=title, show_lines=False)
    for column in columns:
        table.add_column(Text(str(column)))
    for row in rows[:limit]:
        table.add_row(*(Text("NULL" if v is None else str(v)) for v in row))
    console.print(table)
    if len(rows) > limit:
        console.print(f"… {len(rows) - limit} more rows")


class AskDisplay:
    """What `askchain ask` shows while ask() works, from its events: on stderr a live line with the running stage, its
    seconds and the candidates and revision rounds so far, each finished stage kept as a line above it (plain lines
    when stderr is not a terminal); on stdout, unless JSON is asked for, the SQL and rows as soon as they are chosen,
    then the answer in words."""

    def __init__(self, show_results: bool):
        from rich.live import Live
        from rich.spinner import Spinner

        self.show_results = show_results
        self.started = time.perf_counter()
        self.running: dict[str, float] = {}
        self.candidates = 0
        self.revision_round = 0
        self.sql: dict = {}
        self.lock = threading.Lock()
        self.spinner = Spinner("dots", style="cyan")
        self.live = (Live(console=err_console, get_renderable=self._status, transient=True, refresh_per_second=8,
                          redirect_stdout=False, redirect_stderr=False) if err_console.is_terminal else None)

    def __enter__(self) -> "AskDisplay":
        return self  # the live line starts with the first stage: a dataset build before it draws its own bar

    def __exit__(self, *exc) -> None:
        if self.live:
            self.live.stop()

    def on_event(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "stage":
            self._stage(event)
        elif kind == "plan":
            with self._paused():
                steps = "\n".join(f"  {n}. {escape(step)}" for n, step in enumerate(event["steps"], 1))
                err_console.print(f"[bold]Plan, {len(event['steps'])} steps:[/bold]\n{steps}", highlight=False)
        elif kind == "step" and event["status"] == "start" and self.show_results:
            with self._paused():
                console.print(f"[bold]Step {event['step']}:[/bold] {escape(event['question'])}", highlight=False)
        elif kind == "candidates":
            with self.lock:
                self.candidates += len(event.get("sql") or [])
        elif kind == "revision":
            with self.lock:
                self.revision_round = event.get("round", self.revision_round)
        elif kind == "sql":
            self.sql = event
        elif kind == "rows" and self.show_results:
            with self._paused():
                print_sql_and_rows(self.sql.get("sql"), event)
        elif kind == "answer" and self.show_results and event.get("text"):
            with self._paused():
                print_answer(event["text"])

    def _stage(self, event: dict) -> None:
        name = f"step {event['step']} · {event['stage']}" if "step" in event else event["stage"]
        if event["status"] == "start":
            with self.lock:
                self.running[name] = time.perf_counter()
            if self.live:
                self.live.start()  # once: later calls do nothing
            return
        with self.lock:
            self.running.pop(name, None)
        seconds = event.get("seconds", 0)
        err_console.print(f"[green]✓[/green] {_stage_label(name)} [dim]{seconds:.1f} s[/dim]", highlight=False)

    def _status(self):
        now = time.perf_counter()
        with self.lock:
            current = max(self.running.items(), key=lambda item: item[1], default=None)
            parts = [f"{_stage_label(current[0])} {now - current[1]:.1f} s" if current else "starting"]
            if self.candidates:
                parts.append(f"{self.candidates} candidate{'s' if self.candidates != 1 else ''}")
            if self.revision_round:
                parts.append(f"revision round {self.revision_round}")
        parts.append(f"[dim]{now - self.started:.1f} s in all[/dim]")
        self.spinner.update(text=" · ".join(parts))
        return self.spinner

    @contextlib.contextmanager
    def _paused(self):
        """The live line steps aside while results go to stdout, which may be the same terminal."""
        if self.live:
            self.live.stop()
        try:
            yield
        finally:
            if self.live:
                self.live.start()


def _stage_label(name: str) -> str:
    return name.replace("_", " ")


def print_sql_and_rows(sql: str | None, rows: dict) -> None:
    if sql:
        console.print(Syntax(sql, "sql", word_wrap=True))
    if rows.get("error"):
        err_console.print(f"[red]error:[/red] {escape(rows['error'])}", highlight=False)
    elif rows.get("columns"):
        print_rows(rows["columns"], rows["rows"])


def print_answer(text: str) -> None:
    from rich.markdown import Markdown

    if not re.match(r"\s*(\d+\.|[-*+]) ", text):  # rich sets a list off with a blank line of its own
        console.print()
    console.print(Markdown(text))
    console.print()


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in plain English."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="baseline, self-consistency or pipeline (default: settings, pipeline)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (see README)."),
    hint: str = typer.Option("", "--hint", help="Extra knowledge for the question (like BIRD's evidence)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON (progress still goes to stderr)."),
    chart: Optional[Path] = typer.Option(None, "--chart", help="Save the result's chart to this .png or .svg file."),
):
    """Answer a question: write SQL, run it read-only, print the SQL, the rows, the answer in words and the timing."""
    from askchain.answer.chart import chart_file_format, save_chart
    from askchain.api import ask as ask_question

    if chart is not None:
        chart_file_format(chart)  # a wrong suffix fails now, not after the model's work
    with AskDisplay(show_results=not as_json) as display:
        result = ask_question(question, db, method=method, model=model, hint=hint, settings=_settings(model),
                              on_event=display.on_event)
    out = err_console if as_json else console
    if as_json:
        print(json.dumps(result.public(), default=str))
    else:
        u = result.usage
        if result.freshness:
            console.print(f"[dim]{escape(result.freshness)}[/dim]", highlight=False, soft_wrap=True)
        console.print(
            f"[dim]{result.elapsed_s:.1f} s · {u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} "
            f"completion tokens · {result.model} · {result.method}[/dim]"
        )
        if result.confidence:  # how sure, and beside a low answer the results other candidates gave
            console.print(f"confidence: {result.confidence} · {'; '.join(result.confidence_reasons)}", markup=False,
                          highlight=False, soft_wrap=True)
            for other in result.alternatives:
                console.print(f"alternative ({other['votes']} votes):", markup=False, highlight=False)
                print_sql_and_rows(other["sql"], other)
    if chart is not None:
        if save_chart(result.columns, result.rows, chart):
            out.print(f"Chart saved to {escape(str(chart))}", highlight=False, soft_wrap=True)
        else:
            out.print("[dim]No chart: it needs several rows of a time or a label with numbers beside it.[/dim]")
    raise typer.Exit(1 if result.error else 0)


@app.command()
def prepare(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="The method whose prompt to prepare (default: settings, pipeline)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (see README)."),
):
    """Prepare a database's first question ahead of time: the model, the example index and the state of the schema
    prompt, which an embedded model keeps on disk for later processes (`make install` runs it for the default one)."""
    from askchain.api import prepare as prepare_database

    done = prepare_database(db, method=method, model=model, settings=_settings(model))
    prompt = ("no shared schema prompt (schema linking shows each question its own)" if done.prompt_tokens is None
              else f"{done.prompt_tokens} tokens of the schema prompt evaluated")
    console.print(f"Prepared in {done.elapsed_s:.1f} s: {done.examples} examples indexed ({done.embedded} newly "
                  f"embedded), {prompt}.", highlight=False)


@app.command()
def sql(
    statement: str = typer.Argument(..., help="One read-only SQL statement."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print {columns, rows, elapsed_s, truncated} as JSON."),
    max_rows: Optional[int] = typer.Option(None, "--max-rows", help="Row cap (default from settings)."),
):
    """Run one statement through the safe executor (refusals exit with code 2)."""
    from askchain.db.connect import resolve_database
    from askchain.inputs import utf8_text

    utf8_text(statement, "the SQL")
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
        ("askchain.eval.speed", None),
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
        _refuse(str(exc), exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: a bad flag or value, a missing argument
        if type(exc).__name__ == "NoArgsIsHelpError":  # a command given nothing at all shows its help (click's class)
            exc.show()
            sys.exit(exc.exit_code)
        ctx = getattr(exc, "ctx", None)
        _refuse(exc.format_message() + (f" (see '{ctx.command_path} --help')" if ctx else ""), exc.exit_code)
    except Exception as exc:
        # A bug, not bad input: one line and exit 1. Read from the environment, not settings, since loading the
        # settings may be what failed.
        if os.environ.get("ASKCHAIN_DEBUG", "") not in ("", "0"):
            raise
        err_console.print(f"[red]error:[/red] internal error: {escape(describe(exc))}", highlight=False)
        sys.exit(1)


def _refuse(reason: str, exit_code: int) -> NoReturn:
    """Bad input: its reason on one line of stderr (taken literally, never as markup), then the exit code."""
    one_line = " ".join(line.strip() for line in reason.splitlines() if line.strip())
    err_console.print(f"[red]error:[/red] {escape(one_line)}", highlight=False)
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
