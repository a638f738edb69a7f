"""Run a method over a dataset: one resumable JSONL line per question, then the report.

The model is loaded once, each database opened once, and questions sampled deterministically
(`limit` questions drawn with `random.Random(seed)`). A question already in `results.jsonl` is never
asked again, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from askchain.config import Settings, get_settings
from askchain.db.base import Engine, QueryResult
from askchain.errors import DatasetError, QueryFailed, QueryRefused
from askchain.eval.compare import COMPARATORS
from askchain.eval.datasets import Dataset, Example
from askchain.eval.provenance import (
    copied_runs, database_build, dataset_provenance, model_label, repo_relative, run_entry,
)
from askchain.eval.report import write_report
from askchain.eval.results import (
    META_FILE, RESULTS_FILE, RUN_KEY, classify_error, read_meta, read_results, write_meta,
)
from askchain.generation.sql_text import normalize_sql
from askchain.llm.base import ChatModel
from askchain.pipeline.run import try_execute
from askchain.pipeline.select import rows_signature
from askchain.pipeline.result import AskResult

CANDIDATE_CAP = 16
DEFAULT_SPLITS = ("dev", "default")
#: What a results folder is a run of: folders that agree on these may lend each other answers (`reuse`).
RUN_IDENTITY = ("dataset", "split", "method", "model", "pipeline_settings")
#: ... and the sample: a folder holds the answers of one.
SAMPLE_IDENTITY = ("limit", "seed")


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


def gold_result(engine: Engine, example: Example) -> QueryResult:
    """The gold query's result as the answer is judged on it: only the example's judged columns when it names them."""
    gold = engine.execute(example.gold_sql)
    if not example.judged_columns:
        return gold
    missing = [c for c in example.judged_columns if c not in gold.columns]
    if missing:
        raise DatasetError(f"{example.id}: judged column(s) {', '.join(missing)} not in the gold result {gold.columns}")
    kept = [gold.columns.index(c) for c in example.judged_columns]
    return replace(gold, columns=list(example.judged_columns), rows=[tuple(row[i] for i in kept) for row in gold.rows])


def judge(gold: QueryResult, columns: list[str], rows: list, order_matters: bool) -> dict[str, bool]:
    """The verdict of every comparator on one predicted result."""
    return {name: fn(gold.columns, gold.rows, columns, rows, order_matters) for name, fn in COMPARATORS.items()}


def judge_candidates(result: AskResult, engine: Engine, gold: QueryResult, example: Example, comparator: str,
                     selected_correct: bool, cap: int = CANDIDATE_CAP) -> list[dict[str, Any]]:
    """Each distinct executed candidate (up to `cap`) with its generator, its SQL (to read a wrong lead's picks
    without asking again) and whether it is right under `comparator`."""
    compare = COMPARATORS[comparator]
    selected = normalize_sql(result.sql, engine.query_dialect) if result.sql and not result.error else None
    seen: set[str] = set()
    judged = []
    for candidate in result.candidates:
        sql = candidate.get("sql")
        if not sql or candidate.get("error"):
            continue
        key = normalize_sql(engine.qualified_sql(sql), engine.query_dialect)  # as result.sql names its tables
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > cap:
            break
        if key == selected:  # its rows are the answer's: not run again
            right, rows = selected_correct, result.rows
        else:
            run, error = try_execute(engine, sql)
            rows = run.rows if error is None else None
            right = rows is not None and compare(gold.columns, gold.rows, run.columns, rows, example.order_matters)
        judged.append({"generator": candidate.get("generator", ""), "right": bool(right), "sql": sql,
                       "votes": candidate.get("votes", 1), "round": candidate.get("round", 0),
                       "result": None if rows is None else result_key(rows, sql, engine.query_dialect)})
    return judged


def result_key(rows: Sequence[Sequence], sql: str, dialect: str) -> str:
    """A short key equal for candidates the vote counts as one result, so a run's groups can be studied offline."""
    return hashlib.sha256(repr(rows_signature(rows, sql, dialect)).encode()).hexdigest()[:12]


def evaluate_example(example: Example, engine: Engine, model: ChatModel, method: str, settings: Settings,
                     comparator: str) -> dict[str, Any]:
    """Ask one question and judge the answer; the JSONL record for it."""
    from askchain.api import ask

    record: dict[str, Any] = {
        "id": example.id, "db_id": example.db_id, "question": example.question, "difficulty": example.difficulty,
        "category": example.category, "gold_sql": example.gold_sql, "order_matters": example.order_matters,
    }
    try:
        gold = gold_result(engine, example)
    except (QueryRefused, QueryFailed) as exc:
        return {**record, "gold_error": str(exc), "sql": None, "correct": None, "error_class": None}
    result = ask(
        example.question, engine, method=method, model=model, hint=example.hint, settings=settings,
        db_id=example.db_id if example.hold_out_db else None,
        answer=False,  # the summary in words is not scored; it would only add latency and tokens
    )
    ran = result.error is None and not result.abstained  # an abstention on an answerable question is never right
    correct = judge(gold, result.columns, result.rows, example.order_matters) if ran else dict.fromkeys(COMPARATORS, False)
    judged = judge_candidates(result, engine, gold, example, comparator, correct[comparator])
    return {
        **record,
        "gold_error": None,
        "sql": result.sql,
        "correct": correct,
        "error_class": classify_error(result.error, correct[comparator], len(result.rows), len(gold.rows),
                                      result.error_findings),
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
        "confidence": result.confidence, "abstained": result.abstained,  # askchain.pipeline.confidence, .abstain
        "why": result.abstention_reason,
    }


def _differences(previous: dict[str, Any], meta: dict[str, Any], keys: Sequence[str]) -> str:
    """The keys of `keys` in which `previous` (a folder's run.json) differs from `meta`, as text ("" if none)."""
    return ", ".join(_difference(k, previous.get(k), meta.get(k)) for k in keys if previous.get(k) != meta.get(k))


def _difference(key: str, before: Any, now: Any) -> str:
    if isinstance(before, dict) and isinstance(now, dict):
        changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
        return f"{key}: {', '.join(f'{k}={before.get(k)}' for k in changed)}"
    return f"{key}={before}"


def _method_settings(settings: Settings, method: str) -> dict[str, Any]:
    """The settings the method runs with (its `methods:` entry applied): a results folder must not mix answers made
    under two values of them. Raises ConfigError for an unknown method, before any work."""
    from askchain.pipeline.methods import method_settings

    return method_settings(settings, method).pipeline.model_dump(exclude={"answer", "traces", "method"})


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
    reuse: Sequence[Path] = (),
    rerun: Collection[str] = (),
    reuse_despite: Collection[str] = (),
) -> EvalRun:
    """Evaluate `method` with `model` on a sample of `dataset`; append to `out_dir`/results.jsonl and write the report.

    `first` stops after the sample's first `first` questions, so a long comparison can be split across sittings
    (a later run with a larger `first`, or none, continues where this one stopped). The `reuse` folders (runs of the
    same dataset, method, model and settings, on any sample) lend their answers to the questions of this sample they
    hold, except the ids in `rerun`: a change that touches a few questions is measured by asking only those again.
    `reuse_despite` names pipeline settings the lending folders may differ in (`rules_off`, for an ablation whose
    `rerun` holds every question the switched-off rules acted on).
    run.json keeps the provenance of every run whose answers the folder holds (askchain.eval.provenance)."""
    from askchain.resources import process_resources

    settings = dataset.holding_out(settings or get_settings())
    comparator = comparator or dataset.comparator
    if comparator not in COMPARATORS:
        raise DatasetError(f"unknown comparator '{comparator}': use one of {', '.join(COMPARATORS)}")
    model_name = model.model_id if isinstance(model, ChatModel) else (model or settings.llm.model)
    out_dir = Path(out_dir or default_out_dir(dataset, method, model_name, limit, seed))
    selected = select_examples(dataset.examples, limit, seed)
    meta = _run_meta(dataset, method, model_name, limit, seed, comparator, len(selected), settings)
    previous = read_meta(out_dir)
    if previous and (different := _differences(previous, meta, (*RUN_IDENTITY, *SAMPLE_IDENTITY))):
        raise DatasetError(f"{out_dir} holds another run ({different}); choose another --out")
    records = read_results(out_dir)
    done = {r["id"] for r in records}
    wanted = [e for e in selected[:first] if e.id not in done]
    copied, lent_by = _reuse(reuse, meta, {e.id for e in wanted} - set(rerun), reuse_despite)
    pending = [e for e in wanted if e.id not in {r["id"] for r in copied}]
    runs = previous.get("runs") or []
    runs += [entry for entry in lent_by if entry["id"] not in {r["id"] for r in runs}]
    current = None
    if pending:
        chat_model = model if isinstance(model, ChatModel) else process_resources().model(model_name, settings)
        sample = dataset_provenance(dataset.name, dataset.split, dataset.source, limit, seed, first, settings)
        current = run_entry(model_name, getattr(chat_model, "path", None), sample, settings, out_dir)
        runs.append(current)
    meta["runs"] = runs
    out_dir.mkdir(parents=True, exist_ok=True)
    write_meta(out_dir, meta)
    with open(out_dir / RESULTS_FILE, "a", encoding="utf-8") as sink:
        for record in copied:
            sink.write(json.dumps(record, default=str) + "\n")
        records += copied
        if current:
            _answer_pending(
                dataset.name, pending, len(selected), records, sink, comparator, console,
                connect=partial(_connect, dataset, settings, current, meta, out_dir),
                answer=partial(_answer, chat_model, method, settings, comparator, current["id"]),
            )
    write_report(out_dir)
    return EvalRun(out_dir, meta, records)


def _run_meta(dataset: Dataset, method: str, model_name: str, limit: int | None, seed: int, comparator: str,
              questions: int, settings: Settings) -> dict[str, Any]:
    """run.json's description of the run (before its provenance entries): what a folder's answers are answers to."""
    return {
        "dataset": dataset.name, "split": dataset.split, "source": repo_relative(dataset.source), "method": method,
        "model": model_label(model_name), "limit": limit, "seed": seed, "comparator": comparator,
        "questions": questions, "skipped_missing_db": dataset.skipped,
        "pipeline_settings": _method_settings(settings, method),
    }


def _connect(dataset: Dataset, settings: Settings, current: dict[str, Any], meta: dict[str, Any], out_dir: Path,
             db_id: str) -> Engine:
    """Open a question's database; a generated one (the Ethereum dataset) differs once rebuilt, so the run's
    provenance entry records which build answered, and run.json is rewritten at once."""
    engine = dataset.connect(db_id, settings)
    build = database_build(engine)
    if build:
        current["databases"][db_id] = build
        write_meta(out_dir, meta)
    return engine


def _answer(chat_model: ChatModel, method: str, settings: Settings, comparator: str, run_id: str,
            example: Example, engine: Engine) -> dict[str, Any]:
    """One question's results line, marked with the run that answered it."""
    record = evaluate_example(example, engine, chat_model, method, settings, comparator)
    record[RUN_KEY] = run_id
    return record


def _answer_pending(name: str, pending: list[Example], total: int, records: list[dict[str, Any]], sink, comparator: str,
                    console: Console | None, *, connect: Callable[[str], Engine],
                    answer: Callable[[Example, Engine], dict[str, Any]]) -> None:
    """Ask the pending questions in order, each database opened once; every line is written and flushed as it is
    answered, so a stopped run resumes where it stopped. The bar shows the execution accuracy so far."""
    engines: dict[str, Engine] = {}
    with _progress(console) as progress:
        right = sum(bool((r.get("correct") or {}).get(comparator)) for r in records)
        task = progress.add_task("", total=total, completed=total - len(pending))
        for example in pending:
            progress.update(task, description=f"{name} {example.id} · EX {right}/{len(records)}")
            if example.db_id not in engines:
                engines[example.db_id] = connect(example.db_id)
            record = answer(example, engines[example.db_id])
            sink.write(json.dumps(record, default=str) + "\n")
            sink.flush()
            records.append(record)
            right += bool((record.get("correct") or {}).get(comparator))
            progress.update(task, advance=1, description=f"{name} · EX {right}/{len(records)}")


def _reuse(folders: Sequence[Path], meta: dict[str, Any], wanted: set[str], despite: Collection[str] = (),
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The answers other results folders hold for the `wanted` questions (the first folder holding one wins), with
    the provenance entries of the runs that made them; the folders may differ in the pipeline settings `despite`."""
    copied: list[dict[str, Any]] = []
    lent_by: list[dict[str, Any]] = []
    for folder in map(Path, folders):
        source_meta = read_meta(folder)
        if not (folder / RESULTS_FILE).is_file() or not source_meta:
            raise DatasetError(f"{folder} lacks {RESULTS_FILE} or {META_FILE}: no answers to reuse")
        if different := _differences(_without(source_meta, despite), _without(meta, despite), RUN_IDENTITY):
            raise DatasetError(f"{folder} is a run of something else ({different}): its answers cannot be reused")
        taken = {r["id"] for r in copied}
        marked, entries = copied_runs(
            [r for r in read_results(folder) if r["id"] in wanted and r["id"] not in taken], source_meta, folder
        )
        copied += marked
        lent_by += entries
    return copied, lent_by


def _without(meta: dict[str, Any], settings: Collection[str]) -> dict[str, Any]:
    """`meta` without the pipeline settings named."""
    kept = {k: v for k, v in (meta.get("pipeline_settings") or {}).items() if k not in settings}
    return {**meta, "pipeline_settings": kept}


def _progress(console: Console | None) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, transient=False,
    )
