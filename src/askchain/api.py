"""The Python API: `ask()` answers one question; the CLI, the server and the evaluation are thin layers over it."""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from askchain.answer.followup import Turn
from askchain.config import Settings, get_settings
from askchain.db.base import Engine
from askchain.db.connect import resolve_database
from askchain.errors import AskchainError
from askchain.inputs import utf8_text
from askchain.llm.base import ChatModel, track_usage
from askchain.pipeline.flow import run_pipeline
from askchain.pipeline.methods import method_settings
from askchain.pipeline.result import AskResult
from askchain.pipeline.run import Models, Run
from askchain.pipeline.stages import chosen_result, read_as
from askchain.pipeline.trace import Trace, new_run_id
from askchain.resources import Resources, process_resources


def ask(
    question: str,
    db: str | Engine | None = None,
    *,
    method: str | None = None,
    model: str | ChatModel | Models | None = None,
    hint: str = "",
    history: Sequence[Turn] = (),
    settings: Settings | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    db_id: str | None = None,
    answer: bool | None = None,
    resources: Resources | None = None,
) -> AskResult:
    """Answer `question` over `db` (a path, URL or open Engine; default: the default domain's local dataset).

    `model` names one model for every role (default: llm.creative_model / llm.factual_model, else llm.model).
    `history` holds earlier turns of a conversation, so a follow-up is answered as a self-contained question.
    `answer` adds the answer in words and a chart (default: settings.pipeline.answer); evaluation turns it off.
    `resources` holds what is loaded once (models, value indexes): the process's own by default.
    """
    settings = settings or get_settings()
    if not question or not question.strip():
        raise AskchainError("the question is empty")
    utf8_text(question, "the question")
    utf8_text(hint, "the hint")
    method = method or settings.pipeline.method
    configured = method_settings(settings, method, **({} if answer is None else {"answer": answer}))
    engine = resolve_database(db, settings)
    resources = resources or process_resources()
    models = resolve_models(model, settings, resources)
    trace = Trace(new_run_id(), question.strip(), engine.name, method, models.model_id)
    run = Run(question.strip(), engine, models, configured, hint=hint, history=history, db_id=db_id, trace=trace,
              resources=resources)
    started = time.perf_counter()
    with track_usage() as usage:
        final = run_pipeline(run, on_event)
    if configured.pipeline.traces:
        trace.save(settings.paths.traces())
    abstention = final.get("abstention")
    sql, result, error = (None, None, None) if abstention else chosen_result(final["selection"])
    answered = final.get("answer") or {}
    judged = final.get("confidence") or {}
    return AskResult(
        question=final.get("question", run.question),
        sql=engine.qualified_sql(sql),
        columns=result.columns if result else [],
        rows=[list(r) for r in result.rows] if result else [],
        truncated=result.truncated if result else False,
        error=error,
        error_findings=[] if abstention else error_findings(final["selection"].chosen, error),
        usage=usage.as_dict(),
        elapsed_s=round(time.perf_counter() - started, 3),
        method=method,
        model=models.model_id,
        db=engine.name,
        run_id=trace.run_id,
        bytes_processed=result.bytes_processed if result else None,
        candidates=[ex.record() for ex in final.get("executions") or final.get("drafts", [])],
        answer=abstention.text if abstention else answered.get("answer"),
        chart=answered.get("chart"),
        readings=read_as(final),
        freshness=engine.freshness([sql, *(step["sql"] for step in final.get("steps", []))]),
        confidence=judged.get("level"),
        confidence_reasons=judged.get("reasons") or ([abstention.why] if abstention else []),
        alternatives=judged.get("alternatives", []),
        abstained=abstention is not None,
        steps=final.get("steps", []),
    )


def error_findings(chosen, error: str | None) -> list[dict[str, str]]:
    """The error findings of a chosen candidate validation sent back (what AskResult.error_findings holds)."""
    if not error or chosen is None or chosen.status != "invalid":
        return []
    return [{"rule": f.rule, "kind": f.kind, "message": f.message} for f in chosen.findings.found if f.error]


@dataclass(frozen=True)
class Prepared:
    examples: int  # pairs in the example index the database's questions read (0: the method shows none)
    embedded: int  # of which embedded now (new or changed)
    #: Prompt tokens of the schema prompt evaluated now (0: already saved, or the model keeps no state), or None
    #: where schema linking gives each question a schema of its own, so no prompt is shared.
    prompt_tokens: int | None
    elapsed_s: float


def prepare(
    db: str | Engine | None = None,
    *,
    method: str | None = None,
    model: str | ChatModel | Models | None = None,
    settings: Settings | None = None,
    resources: Resources | None = None,
) -> Prepared:
    """Do ahead of a database's first question the work that does not depend on the question: load the models
    (an embedded model's file is assembled and verified), sync the example index its questions read, and evaluate
    the prompt every question over its schema starts with (instructions, schema, notes), whose state an embedded
    model keeps on disk for the processes that follow. Without `db`, the default domain's schema is read from a
    small sample, so its dataset is still built by the first question that needs it."""
    from askchain.domain import get_domain
    from askchain.pipeline.stages import example_scope, schema_prompt_prefix
    from askchain.retrieval.examples import build_example_index

    settings = settings or get_settings()
    resources = resources or process_resources()
    started = time.perf_counter()
    models = resolve_models(model, settings, resources)
    configured = method_settings(settings, method or settings.pipeline.method)
    with contextlib.ExitStack() as stack:
        if db is None and settings.db.default_domain:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="askchain-schema-", ignore_cleanup_errors=True))
            engine = get_domain(settings.db.default_domain).schema_database(Path(directory), settings)
            stack.callback(engine.close)
        else:
            engine = resolve_database(db, settings)
        run = Run("", engine, models, configured, resources=resources)
        examples = embedded = 0
        if configured.pipeline.examples_k > 0:
            examples, embedded = build_example_index(settings, only_db=example_scope(configured, run.schema))
        prefix = schema_prompt_prefix(run)
        evaluated = None if prefix is None else sum(
            m.prefill(prefix) for m in dict.fromkeys((models.creative, models.factual)))
    return Prepared(examples, embedded, evaluated, round(time.perf_counter() - started, 3))


def resolve_models(model: str | ChatModel | Models | None, settings: Settings, resources: Resources) -> Models:
    """The models by role: one given model plays both; by default each role's setting names its own."""
    if isinstance(model, Models):
        return model
    if isinstance(model, ChatModel):
        return Models.single(model)
    if model:
        return Models.single(resources.model(model, settings))
    creative, factual = (resources.model(settings.llm.role_model(role), settings) for role in ("creative", "factual"))
    return Models(creative, factual)
