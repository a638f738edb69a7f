"""The inputs every method shares: the question, its database, the model and the prompt-ready schema."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

from askchain.config import Settings
from askchain.db.base import Engine, QueryResult
from askchain.db.dialects import dialect_label
from askchain.errors import AskchainError
from askchain.llm.base import ChatModel, track_usage
from askchain.pipeline.trace import Trace


@dataclass
class Task:
    question: str
    engine: Engine
    model: ChatModel
    settings: Settings
    hint: str = ""  # external knowledge given with the question (BIRD's "evidence")
    #: Receives progress events ({"type": "stage", "stage": ..., "status": "start"|"end", ...}); the server streams them.
    on_event: Callable[[dict[str, Any]], None] | None = None
    #: Identifies the question's source database under evaluation, so retrieval can exclude its own examples.
    db_id: str | None = None
    #: Where stages record their inputs, outputs, seconds and tokens.
    trace: Trace | None = None

    def emit(self, event: dict[str, Any]) -> None:
        if self.on_event:
            self.on_event(event)

    @property
    def dialect(self) -> str:
        return self.engine.query_dialect

    @property
    def dialect_label(self) -> str:
        return dialect_label(self.dialect)

    @property
    def question_text(self) -> str:
        return f"{self.question}\n-- Hint: {self.hint}" if self.hint else self.question

    def schema_text(self) -> str:
        return self.engine.schema().ddl()


def try_execute(engine: Engine, sql: str) -> tuple[QueryResult | None, str | None]:
    """Run SQL through the safe executor; a refusal or failure becomes an error string, never an exception."""
    try:
        return engine.execute(sql), None
    except AskchainError as exc:
        return None, str(exc)


@contextmanager
def stage(task: Task, name: str, **data: Any):
    """Emit start/end events around a stage and record it in the trace with its seconds and tokens.

    Yields a dict the stage fills with what the trace should keep of its outputs.
    """
    task.emit({"type": "stage", "stage": name, "status": "start", **data})
    started = time.perf_counter()
    record: dict[str, Any] = dict(data)
    try:
        with track_usage() as usage:
            yield record
    finally:
        seconds = time.perf_counter() - started
        if task.trace is not None:
            task.trace.record(name, seconds, usage.as_dict(), **record)
        task.emit({"type": "stage", "stage": name, "status": "end", "seconds": round(seconds, 3)})
