"""The HTTP API and web UI: questions answered as Server-Sent Events, a schema browser, conversation threads.

`create_app(settings, model=...)` builds the app; tests inject a scripted model, `askchain serve` runs it with uvicorn.
Answers run in a bounded worker pool; beyond `max_concurrent` questions in flight the API answers 429.
With `server.token` set, every API route needs `Authorization: Bearer <token>` (the page and /health stay open);
without one the server is open on loopback to this machine's pages and programs only (Host and Origin checked, so a
DNS-rebinding page or another site cannot use it). Bodies over 2 MB get 413, counted as they arrive; no error reply
quotes the request.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import json
import logging
import platform
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict
from importlib import metadata, resources
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Callable

from askchain.config import Settings, get_settings
from askchain.errors import AskchainError, ConfigError, DatabaseError, DatasetError, ProviderError, require
from askchain.inputs import utf8_data
from askchain.llm.base import ChatModel
from askchain.llm.registry import named_models
from askchain.server.a2a import A2ARequest, A2AResponse, generate
from askchain.semantic.governed.query import SemanticQuery
from askchain.server.catalog import Catalog, UnknownDatabase, schema_json
from askchain.server.semantic import run_semantic_query, semantic_catalog
from askchain.server.threads import ThreadStore
from askchain.server.turn import Emit, ModelPool, Services, TurnRequest, run_turn

require("fastapi", "server")
require("sse_starlette", "server")

from fastapi import APIRouter, FastAPI, Request  # noqa: E402
from fastapi import Path as PathParam  # noqa: E402
from fastapi.encoders import jsonable_encoder  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import FileResponse, JSONResponse  # noqa: E402
from fastapi.staticfiles import StaticFiles  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator  # noqa: E402
from sse_starlette.sse import EventSourceResponse  # noqa: E402

from askchain.server.auth import BearerToken, LoopbackOnly  # noqa: E402
from askchain.server.limits import BodyLimit  # noqa: E402

log = logging.getLogger("askchain.server")

STATIC = Path(__file__).with_name("static")
THREAD_ID = r"^[A-Za-z0-9_-]{1,64}$"
DB_NAME = r"^[A-Za-z0-9_.-]{1,100}$"
_END = object()


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    db: str | None = Field(None, pattern=DB_NAME)
    thread_id: str | None = Field(None, pattern=THREAD_ID)
    method: str | None = Field(None, max_length=40)
    model: str | None = Field(None, min_length=1, max_length=120)

    @model_validator(mode="before")
    @classmethod
    def _utf8(cls, data: Any) -> Any:
        return utf8_data(data)


class Slots:
    """Questions in flight, counted from admission until their worker finishes (not until the client leaves)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.active = 0
        self._lock = threading.Lock()

    def acquire(self) -> bool:
        with self._lock:
            if self.active >= self.limit:
                return False
            self.active += 1
            return True

    def release(self) -> None:
        with self._lock:
            self.active -= 1


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

    app = FastAPI(title="askchain", version=_version("askchain"), lifespan=lifespan, docs_url="/api/docs", redoc_url=None)
    app.state.services, app.state.slots, app.state.executor = services, Slots(limit), executor
    for error, handler in ERROR_HANDLERS.items():
        app.add_exception_handler(error, handler)
    app.include_router(api)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit)  # inside the caller checks below, which refuse before any body is read
    if settings.server.token:
        app.add_middleware(BearerToken, token=settings.server.token, is_open=_open_path)
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


# ---- routes ----------------------------------------------------------------------------------------------------
api = APIRouter()


def _busy(slots: Slots) -> JSONResponse:
    return JSONResponse(
        {"detail": f"busy: {slots.limit} questions are being answered, the limit; retry shortly"},
        status_code=429,
        headers={"Retry-After": "5"},
    )


@api.post("/query")
async def query(body: QueryRequest, request: Request):
    services, slots = request.app.state.services, request.app.state.slots
    if body.db is not None and body.db not in services.catalog:
        raise UnknownDatabase(body.db)
    if body.db is None and services.catalog.default is None:
        raise UnknownDatabase("(none configured)")
    methods = services.settings.methods
    if body.method is not None and body.method not in methods:
        return JSONResponse(status_code=422, content={"detail": f"unknown method '{body.method}': use one of {', '.join(methods)}"})
    if not slots.acquire():
        return _busy(slots)
    turn = TurnRequest(
        question=body.question,
        thread_id=body.thread_id or uuid.uuid4().hex,
        db=body.db,
        method=body.method or services.settings.pipeline.method,
        model=body.model,
    )
    events = _start(request.app.state.executor, slots, lambda emit: run_turn(services, turn, emit))
    return EventSourceResponse(events, ping=10)


@api.post("/a2a/generate", response_model=A2AResponse)
async def a2a_generate(body: A2ARequest, request: Request):
    services, slots = request.app.state.services, request.app.state.slots
    if not slots.acquire():
        return _busy(slots)
    try:
        return await asyncio.get_running_loop().run_in_executor(
            request.app.state.executor, generate, services, body, services.settings.pipeline.method)
    finally:
        slots.release()


@api.get("/databases")
def databases_(request: Request):
    catalog = request.app.state.services.catalog
    return {"databases": catalog.describe(), "default": catalog.default}


@api.get("/schema/{db}")
def schema(request: Request, db: str = PathParam(pattern=DB_NAME)):
    return schema_json(db, request.app.state.services.catalog.engine(db).schema())


@api.get("/semantic/{db}")
def semantic_catalog_(request: Request, db: str = PathParam(pattern=DB_NAME)):
    """The database's governed semantic model: measures, dimensions and windows (a 4xx where it has none)."""
    return semantic_catalog(request.app.state.services.catalog.engine(db))


@api.post("/semantic/{db}/query")
def semantic_query_(body: SemanticQuery, request: Request, db: str = PathParam(pattern=DB_NAME)):
    """A semantic query compiled by the semantic layer and run read-only: its SQL, reading and rows."""
    result = run_semantic_query(request.app.state.services.catalog.engine(db), body.model_dump())
    return json.loads(json.dumps(result, default=json_default))


@api.get("/threads/{thread_id}")
def thread(request: Request, thread_id: str = PathParam(pattern=THREAD_ID)):
    turns = request.app.state.services.threads.turns(thread_id)
    if not turns:
        return JSONResponse({"detail": f"no thread '{thread_id}'"}, status_code=404)
    return {"thread_id": thread_id, "turns": json.loads(json.dumps([asdict(t) for t in turns], default=json_default))}


@api.get("/health")
def health(request: Request):
    services, slots = request.app.state.services, request.app.state.slots
    name = services.models.default_name
    spec = named_models().get(name)
    engine = "llama.cpp" if spec or name.endswith(".gguf") else name.split(":", 1)[0]
    return {
        "status": "ok",
        "model": name,
        "engine": engine,
        "models_loaded": services.models.loaded,
        "methods": list(services.settings.methods),
        "default_method": services.settings.pipeline.method,
        "databases": services.catalog.names(),
        "max_concurrent": slots.limit,
        "active": slots.active,
        "versions": {
            "askchain": _version("askchain"),
            "python": platform.python_version(),
            **{pkg: _version(pkg) for pkg in ("fastapi", "duckdb", "sqlglot", "llama-cpp-python", "plotly")},
        },
    }


@api.get("/vendor/plotly.min.js", include_in_schema=False)
def plotly_js():
    path = plotly_bundle()
    if path is None:
        return JSONResponse({"detail": "plotly is not installed: pip install 'askchain[server]'"}, status_code=404)
    return FileResponse(path, media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"})


@api.get("/", include_in_schema=False)
def index():
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def _open_path(path: str) -> bool:
    """What a browser loads before it can send the token: the page, its assets and the health check."""
    return path in ("/", "/health") or path.startswith(("/static/", "/vendor/"))


def _start(executor: ThreadPoolExecutor, slots: Slots, job: Callable[[Emit], None]) -> AsyncIterator[dict[str, str]]:
    """Run `job` in the pool now; return the SSE stream of the events it emits. The slot is freed when the job ends."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def emit(event: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    def finished(future: asyncio.Future) -> None:
        slots.release()
        if not future.cancelled() and future.exception() is not None:
            log.error("answer worker failed", exc_info=future.exception())
            queue.put_nowait({"type": "error", "message": "internal error (logged on the server)"})
        queue.put_nowait(_END)

    loop.run_in_executor(executor, job, emit).add_done_callback(finished)

    async def stream() -> AsyncIterator[dict[str, str]]:
        while (event := await queue.get()) is not _END:
            yield {"event": str(event.get("type", "message")), "data": json.dumps(event, default=json_default)}

    return stream()


def json_default(value: Any) -> Any:
    """Row values JSON does not know: numbers stay numbers, times become ISO text, bytes hex."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return str(value)


def plotly_bundle() -> Path | None:
    """plotly.min.js from the installed plotly package (never a CDN)."""
    try:
        path = Path(str(resources.files("plotly").joinpath("package_data", "plotly.min.js")))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
