"""`askchain mcp`: askchain's tools for MCP clients over stdio (the default) or streamable HTTP."""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

import typer

from askchain.errors import require
from askchain.server.cli import DB_OPTION_HELP, TOKEN_HELP, parse_databases


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_command(
        transport: Transport = typer.Option(Transport.stdio, "--transport", help="stdio (an MCP client starts askchain) or http."),
        host: str = typer.Option("127.0.0.1", "--host", help="http: interface to listen on (beyond loopback needs --token)."),
        port: int = typer.Option(8001, "--port", help="http: TCP port; the endpoint is /mcp."),
        db: Optional[List[str]] = typer.Option(None, "--db", help=DB_OPTION_HELP),
        model: Optional[str] = typer.Option(None, "--model", help="Model name (default from settings)."),
        token: Optional[str] = typer.Option(None, "--token", help=TOKEN_HELP),
    ):
        """Serve askchain to assistants over MCP: tools ask, run_sql, list_databases and describe_schema."""
        require("mcp", "mcp")
        from askchain.config import get_settings
        from askchain.mcp_server.server import build_server, http_app
        from askchain.server.auth import check_exposure
        from askchain.server.catalog import Catalog

        settings = get_settings().with_overrides(llm={"model": model}, server={"token": token})
        if transport is Transport.http:
            check_exposure(host, settings.server.token)
        catalog = Catalog(settings, parse_databases(db))
        server = build_server(settings, catalog)
        try:
            if transport is Transport.stdio:
                server.run("stdio")
            else:
                uvicorn = require("uvicorn", "mcp")
                uvicorn.run(http_app(server, host, settings.server.token), host=host, port=port, log_level="info")
        finally:
            catalog.close()
