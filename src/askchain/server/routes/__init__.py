"""The HTTP API's routes, one router per concern: questions (answering, A2A), the catalog (databases, schemas, semantic
models), threads, and status (health, the web page and its assets). `create_app` includes them in `ROUTERS` order."""

from __future__ import annotations

from askchain.errors import require

require("fastapi", "server")
require("sse_starlette", "server")

from askchain.server.routes import catalog, questions, status, threads  # noqa: E402

ROUTERS = (questions.router, catalog.router, threads.router, status.router)
