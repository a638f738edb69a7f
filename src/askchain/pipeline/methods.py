"""The answering methods by name; each is a plain function of a Task returning an Outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from askchain.db.base import QueryResult
from askchain.errors import ConfigError
from askchain.pipeline.baseline import generate_baseline
from askchain.pipeline.context import Task, stage, try_execute


@dataclass
class Outcome:
    sql: str | None
    result: QueryResult | None
    error: str | None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: The answer stage's output ({"answer", "chart"}) when the method ran it itself.
    answer: dict[str, Any] | None = None


def baseline(task: Task) -> Outcome:
    with stage(task, "generate") as record:
        sql = record["sql"] = generate_baseline(task)[0]
    with stage(task, "execute", sql=sql) as record:
        result, error = try_execute(task.engine, sql)
        record.update(error=error, rows=len(result.rows) if result else 0)
    candidate = {"sql": sql, "generator": "baseline", "error": error}
    return Outcome(sql, result, error, [candidate])


# name -> "module:function"; imported on first use so heavy dependencies load only when needed.
METHODS: dict[str, str] = {
    "baseline": "askchain.pipeline.methods:baseline",
    "self-consistency": "askchain.pipeline.self_consistency:self_consistency",
    "pipeline": "askchain.pipeline.graph:run_pipeline",
}


def get_method(name: str) -> Callable[[Task], Outcome]:
    import importlib

    target = METHODS.get(name)
    if target is None:
        raise ConfigError(f"unknown method '{name}': use one of {', '.join(METHODS)}")
    module, _, function = target.partition(":")
    try:
        return getattr(importlib.import_module(module), function)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"method '{name}' needs '{exc.name}': pip install 'askchain[pipeline]'") from exc
