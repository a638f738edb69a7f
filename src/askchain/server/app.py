"""The HTTP API and web UI: questions answered as Server-Sent Events, a schema browser, conversation threads.

`create_app(settings, model=...)` builds the app; tests inject a scripted model, `askchain serve` runs it with uvicorn.
Answers run in a bounded worker pool; beyond `max_concurrent` questions in flight the API answers 429.
With `server.token` set, every API route needs `Authorization: Bearer <token>` (the page and /health stay open);
without one the server is open on loopback to this machine's pages and programs only (Host and Origin checked, so a
DNS-rebinding page or another site cannot use it). Bodies over 2 MB get 413, counted as they arrive; no error reply
quotes the request.
This module makes the app, its limits and its error replies; the routes are in `askchain.server.routes`, one router
per concern (questions, catalog, threads, status).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from askchain.config import Settings, get_settings
from askchain.errors import AskchainError, ConfigError, DatabaseError, DatasetError, ProviderError, require
from askchain.llm.base import ChatModel
from askchain.server.catalog import Catalog, UnknownDatabase
from askchain.server.threads import ThreadStore
from askchain.server.turn import ModelPool, Services

require("fastapi", "server")
require("sse_starlette", "server")

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.encoders import jsonable_encoder  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402

from askchain.server.auth import BearerToken, LoopbackOnly  # noqa: E402
from askchain.server.limits import BodyLimit  # noqa: E402
from askchain.server.routes import ROUTERS  # noqa: E402
from askchain.server.routes.common import version  # noqa: E402
from askchain.server.routes.questions import Slots  # noqa: E402
from askchain.server.routes.status import STATIC, is_open  # noqa: E402

log = logging.getLogger("askchain.server")


def create_app(
    settings: Settings | None = None,
    model: ChatModel | None = None,
    *,
    databases: dict[str, str] | None = None,
    max_concurrent: int | None = None,
) -> FastAPI:
    """The app over `settings` (databases from settings.server.databases plus `databases`; threads in the data dir).

    With a token every API route needs it; without one the server listens on loopback only (`askchain serve`
    refuses otherwise) and answers only requests this machine's own pages and programs send.
    """
    settings = settings or get_settings()
    limit = max_concurrent or settings.server.max_concurrent
    if limit < 1:
        raise ConfigError("max_concurrent must be at least 1")
    services = Services(
        settings=settings,
        catalog=Catalog(settings, databases),
        threads=ThreadStore(settings.paths.data("threads.sqlite")),
        models=ModelPool(settings, model),
    )
    executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="askchain-answer")

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        executor.shutdown(wait=False, cancel_futures=True)
        services.catalog.close()

    app = FastAPI(title="askchain", version=version("askchain"), lifespan=lifespan, docs_url="/api/docs", redoc_url=None)
    app.state.services, app.state.slots, app.state.executor = services, Slots(limit), executor
    for error, handler in ERROR_HANDLERS.items():
        app.add_exception_handler(error, handler)
    for router in ROUTERS:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit)  # inside the caller checks below, which refuse before any body is read
    if settings.server.token:
        app.add_middleware(BearerToken, token=settings.server.token, is_open=is_open)
    else:
        app.add_middleware(LoopbackOnly)
    return app


# ---- errors: one-line reasons, never the request body or a traceback ---------------------------------------------
async def _unknown_database(_: Request, exc: UnknownDatabase) -> JSONResponse:
    return JSONResponse({"detail": f"unknown database '{exc.args[0]}'"}, status_code=404)


async def _refused(_: Request, exc: AskchainError) -> JSONResponse:
    unavailable = isinstance(exc, (DatabaseError, ConfigError, DatasetError, ProviderError))
    return JSONResponse({"detail": str(exc)}, status_code=503 if unavailable else 400)


async def _invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422 without the `input` it quotes: a reply must not hand a request's body back to its sender."""
    return JSONResponse({"detail": jsonable_encoder([_without_input(error) for error in exc.errors()])}, status_code=422)


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "internal error (logged on the server)"}, status_code=500)


ERROR_HANDLERS = {
    UnknownDatabase: _unknown_database,
    AskchainError: _refused,
    RequestValidationError: _invalid_request,
    Exception: _internal_error,
}
#: Longest field name or key a validation error repeats (an unknown key is the client's text).
ERROR_LOC_CHARS = 100


def _without_input(error: dict[str, Any]) -> dict[str, Any]:
    loc = [part[:ERROR_LOC_CHARS] if isinstance(part, str) else part for part in error.get("loc", ())]
    return {**{key: value for key, value in error.items() if key != "input"}, "loc": loc}
