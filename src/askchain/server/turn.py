"""One conversation turn as a stream of events: rewrite a follow-up, ask, summarise, chart, remember.

It runs in a worker thread (`ask()` is synchronous and CPU-bound) and reports through `emit`, which the
HTTP layer forwards as Server-Sent Events; the pipeline's own events pass through unchanged.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from askchain.answer import rewrite_followup
from askchain.api import ask
from askchain.config import Settings
from askchain.errors import AskchainError, ConfigError
from askchain.llm.base import ChatModel, track_usage
from askchain.llm.registry import get_model
from askchain.pipeline.answer_stage import answer_result
from askchain.pipeline.context import stage
from askchain.server.catalog import Catalog, UnknownDatabase
from askchain.server.threads import ThreadStore, TurnRecord

log = logging.getLogger("askchain.server")

Emit = Callable[[dict[str, Any]], None]

#: Rows sent to the browser; the row count and the chart still use the whole result.
STREAMED_ROWS = 1000


class ModelPool:
    """The models a server uses, loaded once: the injected or default model, plus named ones asked for by requests."""

    def __init__(self, settings: Settings, model: ChatModel | None = None):
        self.settings = settings
        self.injected = model
        self._models: dict[str, ChatModel] = {}
        self._lock = threading.Lock()

    @property
    def default_name(self) -> str:
        return self.injected.model_id if self.injected else self.settings.llm.model

    @property
    def loaded(self) -> list[str]:
        return ([self.injected.model_id] if self.injected else []) + [m.model_id for m in self._models.values()]

    def get(self, name: str | None) -> ChatModel:
        if self.injected and name in (None, self.injected.model_id):
            return self.injected
        name = name or self.settings.llm.model
        if name.endswith(".gguf") or "/" in name.split(":", 1)[0]:
            raise ConfigError("model files cannot be chosen over HTTP: use a model name (see GET /health)")
        with self._lock:
            if name not in self._models:
                self._models[name] = get_model(name, self.settings)
            return self._models[name]


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


@dataclass
class _Sink:
    """Lets the pipeline's `stage()` helper report the server's own stages (rewrite, answer) the same way."""

    emit: Emit
    trace: None = None  # the server's own stages are not part of the pipeline run's trace


def run_turn(services: Services, request: TurnRequest, emit: Emit) -> None:
    """Answer one question of a thread, emitting events; always ends with a `done` or an `error` event."""
    started = time.perf_counter()
    sink = _Sink(emit)
    emit({"type": "start", "thread_id": request.thread_id, "question": request.question, "method": request.method})
    with track_usage() as usage:
        try:
            model = services.models.get(request.model)
            db = request.db or services.catalog.default
            engine = services.catalog.engine(db)
            history = services.threads.history(request.thread_id)
            asked = request.question
            if history:
                with stage(sink, "rewrite"):
                    asked = rewrite_followup(request.question, history, model)
                emit({"type": "rewrite", "original": request.question, "question": asked})
            # The answer stage runs here rather than inside ask(), so SQL and rows reach the client before the summary.
            result = ask(asked, engine, method=request.method, model=model, settings=services.settings, on_event=emit, answer=False)
            emit({"type": "sql", "sql": result.sql, "dialect": engine.query_dialect})
            emit({
                "type": "rows",
                "columns": result.columns,
                "rows": result.rows[:STREAMED_ROWS],
                "row_count": len(result.rows),
                "truncated": result.truncated,
                "error": result.error,
            })
            with stage(sink, "answer"):
                answered = answer_result(asked, result.sql, result.columns, result.rows, truncated=result.truncated,
                                         error=result.error, model=model)
            text = answered["answer"]
            emit({"type": "answer", "text": text})
            emit({"type": "chart", "chart": answered["chart"]})
            record = services.threads.append(request.thread_id, TurnRecord(
                question=request.question, asked=asked, db=db, sql=result.sql, answer=text, columns=result.columns,
                rows=result.rows, row_count=len(result.rows), error=result.error, run_id=result.run_id,
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
        "question": asked,
        "db": db,
        "method": request.method,
        "model": model.model_id,
        "seconds": round(time.perf_counter() - started, 3),
        "tokens": usage.total_tokens,
        "usage": usage.as_dict(),
        "bytes_processed": result.bytes_processed,
        "run_id": result.run_id,
        "error": result.error,
    })
