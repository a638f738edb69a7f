"""One conversation turn as a stream of events: the run's own events (follow-up rewrite, stages, SQL, rows, answer,
chart) forwarded as they happen, then the turn remembered in its thread.

It runs in a worker thread (`ask()` is synchronous and CPU-bound) and reports through `emit`, which the
HTTP layer forwards as Server-Sent Events.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

from askchain.api import ask, resolve_models
from askchain.config import Settings
from askchain.errors import AskchainError, ConfigError
from askchain.llm.base import ChatModel
from askchain.pipeline.run import Models
from askchain.resources import Resources, process_resources
from askchain.server.catalog import Catalog, UnknownDatabase
from askchain.server.threads import ThreadStore, TurnRecord

log = logging.getLogger("askchain.server")

Emit = Callable[[dict[str, Any]], None]

#: Rows sent to the browser (`rows_returned`); `row_count` and the chart still use the whole result.
STREAMED_ROWS = 1000


class ModelPool:
    """The models a server answers with: the injected one (tests), a model a request names, else each role's model
    from settings; loaded once, through the process's resources."""

    def __init__(self, settings: Settings, model: ChatModel | None = None, resources: Resources | None = None):
        self.settings = settings
        self.injected = model
        self.resources = resources or process_resources()

    @property
    def default_name(self) -> str:
        return self.injected.model_id if self.injected else self.settings.llm.model

    @property
    def loaded(self) -> list[str]:
        return ([self.injected.model_id] if self.injected else []) + self.resources.loaded_models()

    def get(self, name: str | None) -> ChatModel | Models:
        if self.injected and name in (None, self.injected.model_id):
            return self.injected
        if name is None:
            return resolve_models(None, self.settings, self.resources)
        if name.endswith(".gguf") or "/" in name.split(":", 1)[0]:
            raise ConfigError("model files cannot be chosen over HTTP: use a model name (see GET /health)")
        return self.resources.model(name, self.settings)


@dataclass
class Services:
    """What a turn needs from the server: settings, databases, conversation memory and models."""

    settings: Settings
    catalog: Catalog
    threads: ThreadStore
    models: ModelPool


@dataclass
class TurnRequest:
    question: str
    thread_id: str
    db: str | None = None
    method: str = "baseline"
    model: str | None = None


def run_turn(services: Services, request: TurnRequest, emit: Emit) -> None:
    """Answer one question of a thread, forwarding the run's events; always ends with a `done` or an `error` event."""
    started = time.perf_counter()
    emit({"type": "start", "thread_id": request.thread_id, "question": request.question, "method": request.method})

    def forward(event: dict[str, Any]) -> None:
        if event.get("type") == "rows":  # the row count and the chart still use the whole result
            event = {**event, "rows": event["rows"][:STREAMED_ROWS], "rows_returned": min(len(event["rows"]), STREAMED_ROWS)}
        emit(event)

    try:
        model = services.models.get(request.model)
        db = request.db or services.catalog.default
        engine = services.catalog.engine(db)
        history = services.threads.history(request.thread_id)
        result = ask(request.question, engine, method=request.method, model=model, history=history,
                     settings=services.settings, on_event=forward)
        record = services.threads.append(request.thread_id, TurnRecord(
            question=request.question, asked=result.question, db=db, sql=result.sql, answer=result.answer or "",
            columns=result.columns, rows=result.rows, row_count=len(result.rows), error=result.error,
            run_id=result.run_id, steps=result.steps,
            confidence={"level": result.confidence, "reasons": result.confidence_reasons,
                        "alternatives": result.alternatives} if result.confidence else None,
        ))
    except (AskchainError, UnknownDatabase) as exc:
        message = f"unknown database '{exc.args[0]}'" if isinstance(exc, UnknownDatabase) else str(exc)
        emit({"type": "error", "message": message, "thread_id": request.thread_id})
        return
    except Exception:  # a bug: log it, tell the client without a traceback
        log.exception("turn failed: %r", request)
        emit({"type": "error", "message": "internal error (logged on the server)", "thread_id": request.thread_id})
        return
    emit({
        "type": "done",
        "thread_id": request.thread_id,
        "turn": record.turn,
        "question": result.question,
        "db": db,
        "method": request.method,
        "model": model.model_id,
        "seconds": round(time.perf_counter() - started, 3),
        "tokens": result.usage["total_tokens"],
        "usage": result.usage,
        "bytes_processed": result.bytes_processed,
        "run_id": result.run_id,
        "error": result.error,
        "freshness": result.freshness,
    })
