"""Run a method over a dataset: one resumable JSONL line per question, then the report.

The model is loaded once, each database opened once, and questions sampled deterministically
(`limit` questions drawn with `random.Random(seed)`). A question already in `results.jsonl` is never
asked again, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from askchain.config import Settings, get_settings
from askchain.db.base import Engine, QueryResult
from askchain.errors import DatasetError, QueryFailed, QueryRefused
from askchain.eval.compare import COMPARATORS
from askchain.eval.datasets import Dataset, Example
from askchain.generation.sql_text import normalize_sql
from askchain.llm.base import ChatModel
from askchain.pipeline.context import try_execute
from askchain.pipeline.result import AskResult

RESULTS_FILE = "results.jsonl"
META_FILE = "run.json"
CANDIDATE_CAP = 16
DEFAULT_SPLITS = ("dev", "default")

# Why a prediction failed, from the executor's message: first matching rule wins, else "runtime".
ERROR_RULES: tuple[tuple[str, re.Pattern], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("timeout", r"time limit|timed? ?out|interrupted"),
        ("syntax", r"cannot parse|syntax error|parser error|incomplete input|unrecognized token"),
        ("no-such-table-or-column", r"no such (table|column)|(table|column)\b.*\b(does not exist|not found)|referenced column"),
        ("refused", r"not allowed|only read-only|exactly one statement|empty sql"),
    )
)
#: Classes meaning the predicted SQL did not run to completion.
EXECUTION_ERRORS = ("refused", "syntax", "no-such-table-or-column", "runtime", "timeout")


@dataclass
class EvalRun:
    out_dir: Path
    meta: dict[str, Any]
    records: list[dict[str, Any]]


def select_examples(examples: list[Example], limit: int | None, seed: int) -> list[Example]:
    """`limit` questions drawn with `seed` (same seed, same questions), kept in dataset order; all if no limit."""
    if limit is None or limit >= len(examples):
        return list(examples)
    chosen = sorted(random.Random(seed).sample(range(len(examples)), limit))
    return [examples[i] for i in chosen]


def default_out_dir(dataset: Dataset, method: str, model: str, limit: int | None, seed: int) -> Path:
    """runs/eval/<dataset>-<method>-<model>-<limit>-<seed>/ (a split other than the default is named after the dataset)."""
    label = dataset.name if dataset.split in DEFAULT_SPLITS else f"{dataset.name}_{dataset.split}"
    name = f"{label}-{method}-{model}-{limit if limit is not None else 'all'}-{seed}"
    return Path("runs") / "eval" / re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def classify_error(error: str | None, correct: bool, pred_rows: int, gold_rows: int) -> str:
    """The error class of one prediction (see ERROR_RULES for failed executions)."""
    if error:
        return next((name for name, rule in ERROR_RULES if rule.search(error)), "runtime")
    if correct:
        return "none"
    return "empty-result" if pred_rows == 0 and gold_rows > 0 else "wrong-result"


def judge(gold: QueryResult, columns: list[str], rows: list, order_matters: bool) -> dict[str, bool]:
    """The verdict of every comparator on one predicted result."""
    return {name: fn(gold.columns, gold.rows, columns, rows, order_matters) for name, fn in COMPARATORS.items()}


def judge_candidates(result: AskResult, engine: Engine, gold: QueryResult, example: Example, comparator: str,
                     selected_correct: bool, cap: int = CANDIDATE_CAP) -> list[dict[str, Any]]:
    """Each distinct executed candidate (up to `cap`) with its generator and whether it is right under `comparator`."""
    compare = COMPARATORS[comparator]
    selected = normalize_sql(result.sql, engine.query_dialect) if result.sql and not result.error else None
    seen: set[str] = set()
    judged = []
    for candidate in result.candidates:
        sql = candidate.get("sql")
        if not sql or candidate.get("error"):
            continue
        key = normalize_sql(sql, engine.query_dialect)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > cap:
            break
        if key == selected:
            right = selected_correct
        else:
            run, error = try_execute(engine, sql)
            right = error is None and compare(gold.columns, gold.rows, run.columns, run.rows, example.order_matters)
        judged.append({"generator": candidate.get("generator", ""), "right": bool(right)})
    return judged


def evaluate_example(example: Example, engine: Engine, model: ChatModel, method: str, settings: Settings,
                     comparator: str) -> dict[str, Any]:
    """Ask one question and judge the answer; the JSONL record for it."""
    from askchain.api import ask

    record: dict[str, Any] = {
        "id": example.id, "db_id": example.db_id, "question": example.question, "difficulty": example.difficulty,
        "category": example.category, "gold_sql": example.gold_sql, "order_matters": example.order_matters,
    }
    try:
        gold = engine.execute(example.gold_sql)
    except (QueryRefused, QueryFailed) as exc:
        return {**record, "gold_error": str(exc), "sql": None, "correct": None, "error_class": None}
    result = ask(
        example.question, engine, method=method, model=model, hint=example.hint, settings=settings, db_id=example.db_id,
        answer=False,  # the summary in words is not scored; it would only add latency and tokens
    )
    ran = result.error is None
    correct = judge(gold, result.columns, result.rows, example.order_matters) if ran else dict.fromkeys(COMPARATORS, False)
    judged = judge_candidates(result, engine, gold, example, comparator, correct[comparator])
    return {
        **record,
        "gold_error": None,
        "sql": result.sql,
        "correct": correct,
        "error_class": classify_error(result.error, correct[comparator], len(result.rows), len(gold.rows)),
        "error": result.error,
        "gold_rows": len(gold.rows),
        "pred_rows": len(result.rows),
        "prompt_tokens": result.usage.get("prompt_tokens", 0),
        "completion_tokens": result.usage.get("completion_tokens", 0),
        "latency_s": result.elapsed_s,
        "n_candidates": len(result.candidates),
        "any_candidate_correct": any(c["right"] for c in judged),
        "candidates": judged,
        "run_id": result.run_id,
    }


def read_results(out_dir: Path) -> list[dict[str, Any]]:
    path = Path(out_dir) / RESULTS_FILE
    if not path.is_file():
        return []
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{n} is not valid JSON: {exc.msg}") from exc
    return records


def _check_meta(out_dir: Path, meta: dict[str, Any]) -> None:
    """Refuse to mix runs: a results folder belongs to one dataset/method/model/sample."""
    path = out_dir / META_FILE
    if not path.is_file():
        return
    previous = json.loads(path.read_text())
    keys = ("dataset", "split", "method", "model", "limit", "seed", "pipeline_settings")
    different = [k for k in keys if previous.get(k) != meta.get(k)]
    if different:
        raise DatasetError(
            f"{out_dir} holds another run ({', '.join(_difference(k, previous.get(k), meta.get(k)) for k in different)}); "
            "choose another --out"
        )


def _difference(key: str, before: Any, now: Any) -> str:
    if isinstance(before, dict) and isinstance(now, dict):
        changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
        return f"{key}: {', '.join(f'{k}={before.get(k)}' for k in changed)}"
    return f"{key}={before}"


#: The settings each method reads: a results folder must not mix answers made under two values of them.
METHOD_SETTINGS: dict[str, set[str] | None] = {
    "baseline": set(),
    "self-consistency": {"self_consistency_n", "self_consistency_temperature"},
    "pipeline": None,  # all of `pipeline` but the answer stage, traces and the default method
}


def _method_settings(settings: Settings, method: str) -> dict[str, Any]:
    used = METHOD_SETTINGS.get(method)
    if used is None:
        return settings.pipeline.model_dump(exclude={"answer", "traces", "method"})
    return settings.pipeline.model_dump(include=used)


def run_eval(
    dataset: Dataset,
    method: str = "baseline",
    model: str | ChatModel | None = None,
    settings: Settings | None = None,
    limit: int | None = None,
    seed: int = 0,
    out_dir: Path | None = None,
    *,
    comparator: str | None = None,
    console: Console | None = None,
    first: int | None = None,
) -> EvalRun:
    """Evaluate `method` with `model` on a sample of `dataset`; append to `out_dir`/results.jsonl and write the report.

    `first` stops after the sample's first `first` questions, so a long comparison can be split across sittings
    (a later run with a larger `first`, or none, continues where this one stopped)."""
    from askchain.eval.report import write_report
    from askchain.llm.registry import get_model
    from askchain.pipeline.methods import get_method

    settings = settings or get_settings()
    get_method(method)  # fail on an unknown method before any work
    comparator = comparator or dataset.comparator
    if comparator not in COMPARATORS:
        raise DatasetError(f"unknown comparator '{comparator}': use one of {', '.join(COMPARATORS)}")
    model_name = model.model_id if isinstance(model, ChatModel) else (model or settings.llm.model)
    out_dir = Path(out_dir or default_out_dir(dataset, method, model_name, limit, seed))
    selected = select_examples(dataset.examples, limit, seed)
    meta = {
        "dataset": dataset.name, "split": dataset.split, "source": dataset.source, "method": method, "model": model_name,
        "limit": limit, "seed": seed, "comparator": comparator, "questions": len(selected),
        "skipped_missing_db": dataset.skipped,
        "pipeline_settings": _method_settings(settings, method),
    }
    _check_meta(out_dir, meta)
    records = read_results(out_dir)
    done = {r["id"] for r in records}
    pending = [e for e in selected[:first] if e.id not in done]
    chat_model = model if isinstance(model, ChatModel) or not pending else get_model(model_name, settings)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2))
    if pending:
        engines: dict[str, Engine] = {}
        with open(out_dir / RESULTS_FILE, "a", encoding="utf-8") as sink, _progress(console) as progress:
            right = sum(bool((r.get("correct") or {}).get(comparator)) for r in records)
            task = progress.add_task("", total=len(selected), completed=len(selected) - len(pending))
            for example in pending:
                progress.update(task, description=f"{dataset.name} {example.id} · EX {right}/{len(records)}")
                if example.db_id not in engines:
                    engines[example.db_id] = dataset.connect(example.db_id, settings)
                record = evaluate_example(example, engines[example.db_id], chat_model, method, settings, comparator)
                sink.write(json.dumps(record, default=str) + "\n")
                sink.flush()
                records.append(record)
                right += bool((record.get("correct") or {}).get(comparator))
                progress.update(task, advance=1, description=f"{dataset.name} · EX {right}/{len(records)}")
    write_report(out_dir)
    return EvalRun(out_dir, meta, records)


def _progress(console: Console | None) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, transient=False,
    )
