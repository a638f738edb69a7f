"""`askchain serve`: the HTTP API and web UI on one port."""

from __future__ import annotations

from typing import List, Optional

import typer

from askchain.errors import ConfigError, require

DB_OPTION_HELP = "A named database, NAME=PATH_OR_URL (repeatable)."
TOKEN_HELP = "API token clients send as 'Authorization: Bearer TOKEN' (default: settings server.token, ASKCHAIN_SERVER__TOKEN)."


def parse_databases(items: list[str] | None) -> dict[str, str]:
    """`--db NAME=PATH_OR_URL` options as a name -> location mapping."""
    databases = {}
    for item in items or []:
        name, sep, location = item.partition("=")
        if not sep or not name or not location:
            raise ConfigError(f"--db takes NAME=PATH_OR_URL, got '{item}'")
        databases[name] = location
    return databases


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (beyond loopback, e.g. 0.0.0.0, needs --token)."),
        port: int = typer.Option(8000, "--port", help="TCP port."),
        db: Optional[List[str]] = typer.Option(None, "--db", help=DB_OPTION_HELP),
        model: Optional[str] = typer.Option(None, "--model", help="Model name (default from settings)."),
        max_concurrent: Optional[int] = typer.Option(None, "--max-concurrent", help="Questions in flight before 429."),
        token: Optional[str] = typer.Option(None, "--token", help=TOKEN_HELP),
    ):
        """Serve the web UI and the HTTP API (POST /query streams Server-Sent Events)."""
        uvicorn = require("uvicorn", "server")
        from askchain.config import get_settings
        from askchain.server.app import create_app
        from askchain.server.auth import check_exposure

        settings = get_settings().with_overrides(llm={"model": model}, server={"token": token})
        check_exposure(host, settings.server.token)
        app_ = create_app(settings, databases=parse_databases(db), max_concurrent=max_concurrent)
        uvicorn.run(app_, host=host, port=port, log_level="info")
