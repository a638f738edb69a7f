"""Self-consistency: the baseline prompt sampled n times, one error-driven revision per failed sample,
and a majority vote over execution results. The pipeline must earn its extra machinery against this."""

from __future__ import annotations

from askchain.generation.candidates import Candidate, dedupe
from askchain.generation.sql_text import normalize_sql
from askchain.pipeline.baseline import generate_baseline, plain_context
from askchain.pipeline.context import Task, stage, try_execute
from askchain.pipeline.methods import Outcome
from askchain.pipeline.revise import revision_loop
from askchain.pipeline.select import best_failure, group_by_result
from askchain.pipeline.validate import Findings


def self_consistency(task: Task) -> Outcome:
    cfg = task.settings.pipeline
    with stage(task, "generate") as record:
        samples = record["candidates"] = generate_baseline(
            task, temperature=cfg.self_consistency_temperature, n=cfg.self_consistency_n
        )
    candidates = dedupe([Candidate(sql, "baseline") for sql in samples], task.dialect)
    ctx = plain_context(task)
    with stage(task, "revise") as record:
        executions = revision_loop(
            candidates, ctx=ctx, model=task.model, key=lambda sql: normalize_sql(sql, task.dialect),
            validate=lambda sql: Findings(), execute=lambda sql: try_execute(task.engine, sql),
            rounds=1, max_revisions=len(candidates), seed=task.settings.llm.seed,
        )
        records = record["executions"] = [ex.record() for ex in executions]
    with stage(task, "select") as record:
        groups = group_by_result(executions, task.dialect)  # largest vote first: duplicate samples count
        record["groups"] = [g.votes for g in groups]
    if not groups:
        failed = best_failure(executions)
        error = None if failed.status == "empty" else failed.error
        return Outcome(failed.candidate.sql, failed.result, error, records)
    chosen = groups[0].representative
    return Outcome(chosen.candidate.sql, chosen.result, None, records)
