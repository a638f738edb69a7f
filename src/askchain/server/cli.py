"""`askchain serve`: the HTTP API and web UI on one port."""

from __future__ import annotations

from typing import List, Optional

import typer

from askchain.errors import ConfigError, require


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 for all)."),
        port: int = typer.Option(8000, "--port", help="TCP port."),
        db: Optional[List[str]] = typer.Option(None, "--db", help="A named database, NAME=PATH_OR_URL (repeatable)."),
        model: Optional[str] = typer.Option(None, "--model", help="Model name (default from settings)."),
        max_concurrent: Optional[int] = typer.Option(None, "--max-concurrent", help="Questions in flight before 429."),
    ):
        """Serve the web UI and the HTTP API (POST /query streams Server-Sent Events)."""
        uvicorn = require("uvicorn", "server")
        from askchain.config import get_settings
        from askchain.server.app import create_app

        settings = get_settings()
        if model:
            settings = settings.with_overrides(llm={"model": model})
        databases = {}
        for item in db or []:
            name, sep, location = item.partition("=")
            if not sep or not name or not location:
                raise ConfigError(f"--db takes NAME=PATH_OR_URL, got '{item}'")
            databases[name] = location
        app_ = create_app(settings, databases=databases, max_concurrent=max_concurrent)
        uvicorn.run(app_, host=host, port=port, log_level="info")
