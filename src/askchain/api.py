"""The Python API: `ask()` answers one question; the CLI and the server are thin layers over it."""

from __future__ import annotations

import time
from typing import Any, Callable

from askchain.config import Settings, get_settings
from askchain.db.base import Engine
from askchain.errors import AskchainError
from askchain.llm.base import ChatModel, track_usage
from askchain.llm.registry import get_model
from askchain.pipeline.answer_stage import answer_result
from askchain.pipeline.context import Task, stage
from askchain.pipeline.methods import get_method
from askchain.pipeline.result import AskResult
from askchain.pipeline.trace import Trace, new_run_id


def ask(
    question: str,
    db: str | Engine | None = None,
    *,
    method: str | None = None,
    model: str | ChatModel | None = None,
    hint: str = "",
    settings: Settings | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    db_id: str | None = None,
    answer: bool | None = None,
) -> AskResult:
    """Answer `question` over `db` (a path, URL or open Engine; default: the local Ethereum dataset).

    `answer` adds a summary in words and a chart (default: settings.pipeline.answer); evaluation turns it off.
    """
    settings = settings or get_settings()
    if not question or not question.strip():
        raise AskchainError("the question is empty")
    engine = resolve_database(db, settings)
    chat_model = model if isinstance(model, ChatModel) else get_model(model, settings)
    method = method or settings.pipeline.method
    run = get_method(method)
    trace = Trace(new_run_id(), question.strip(), engine.name, method, chat_model.model_id)
    task = Task(question.strip(), engine, chat_model, settings, hint=hint, on_event=on_event, db_id=db_id, trace=trace)
    started = time.perf_counter()
    if answer is not None:
        settings = settings.with_overrides(pipeline={"answer": answer})
        task.settings = settings
    with track_usage() as usage:
        outcome = run(task)
        if settings.pipeline.answer and outcome.answer is None:
            with stage(task, "answer") as record:
                found = outcome.result
                outcome.answer = answer_result(
                    task.question, outcome.sql, found.columns if found else [], found.rows if found else [],
                    truncated=bool(found and found.truncated), error=outcome.error, model=chat_model,
                )
                record.update(outcome.answer)
            task.emit({"type": "answer", **outcome.answer})
    if settings.pipeline.traces:
        trace.save(settings.paths.data("traces", "x").parent)
    result = outcome.result
    return AskResult(
        question=task.question,
        sql=outcome.sql,
        columns=result.columns if result else [],
        rows=[list(r) for r in result.rows] if result else [],
        truncated=result.truncated if result else False,
        error=outcome.error,
        usage=usage.as_dict(),
        elapsed_s=round(time.perf_counter() - started, 3),
        method=method,
        model=chat_model.model_id,
        db=engine.name,
        run_id=trace.run_id,
        bytes_processed=result.bytes_processed if result else None,
        candidates=outcome.candidates,
        answer=(outcome.answer or {}).get("answer"),
        chart=(outcome.answer or {}).get("chart"),
    )


def resolve_database(db: str | Engine | None, settings: Settings) -> Engine:
    from askchain.db.connect import open_database

    if isinstance(db, Engine):
        return db
    if db:
        return open_database(db, settings.db)
    try:
        from askchain.domains.ethereum.dataset import default_engine
    except ModuleNotFoundError:
        raise AskchainError("no database given: pass --db PATH (a SQLite or DuckDB file, or a database URL)") from None
    return default_engine(settings)
