"""Answering questions: POST /query streams a turn's events as Server-Sent Events; POST /a2a/generate answers an agent.

Both run in the app's bounded worker pool and take a slot while they do; beyond the limit they answer 429.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, AsyncIterator, Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from sse_starlette.sse import EventSourceResponse

from askchain.inputs import utf8_data
from askchain.server.a2a import A2ARequest, A2AResponse, generate
from askchain.server.catalog import UnknownDatabase
from askchain.server.routes.common import DB_NAME, THREAD_ID, json_default
from askchain.server.turn import Emit, TurnRequest, run_turn

log = logging.getLogger("askchain.server")

router = APIRouter(tags=["questions"])
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


def _busy(slots: Slots) -> JSONResponse:
    return JSONResponse(
        {"detail": f"busy: {slots.limit} questions are being answered, the limit; retry shortly"},
        status_code=429,
        headers={"Retry-After": "5"},
    )


@router.post("/query")
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


@router.post("/a2a/generate", response_model=A2AResponse)
async def a2a_generate(body: A2ARequest, request: Request):
    services, slots = request.app.state.services, request.app.state.slots
    if not slots.acquire():
        return _busy(slots)
    try:
        return await asyncio.get_running_loop().run_in_executor(
            request.app.state.executor, generate, services, body, services.settings.pipeline.method)
    finally:
        slots.release()


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
