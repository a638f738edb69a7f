"""Where a stage's events go: the writer of the node running it (LangGraph's custom stream, or the caller's
`on_event` when a chain of stages runs without LangGraph), held in a context variable while the stage runs."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

Writer = Callable[[dict[str, Any]], None]

_writer: ContextVar[Writer | None] = ContextVar("askchain_stage_writer", default=None)


def emit(event: dict[str, Any]) -> None:
    """Stream an event to whoever runs the stage; a stage called directly (outside a run) drops it."""
    writer = _writer.get()
    if writer is not None:
        writer(event)


@contextmanager
def writing_to(writer: Writer) -> Iterator[None]:
    """Send the events emitted inside the block to `writer`."""
    token = _writer.set(writer)
    try:
        yield
    finally:
        _writer.reset(token)
