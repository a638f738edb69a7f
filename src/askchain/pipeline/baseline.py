"""The baseline: one prompt (schema and instructions first, question last) -> SQL -> safe execution.

It is the pipeline's `direct` prompt without retrieved examples or value hints, so the baseline, its
self-consistency variant and their revisions share one cached prompt prefix.
"""

from __future__ import annotations

from askchain.generation.context import GenerationContext
from askchain.generation.sql_text import END_OF_SQL_BLOCK, extract_sql
from askchain.pipeline.context import Task


def plain_context(task: Task) -> GenerationContext:
    schema = task.engine.schema()
    return GenerationContext(
        task.question_text, task.dialect, task.dialect_label, task.schema_text(), schema.notes, db_id=schema.db_id
    )


def generate_baseline(task: Task, *, temperature: float = 0.0, n: int = 1, seed: int | None = None) -> list[str]:
    """Candidate SQL from the baseline prompt: greedy by default, `n` samples when temperature > 0."""
    completion = task.model.complete(
        plain_context(task).messages("askchain.generation", "direct"),
        temperature=temperature,
        top_p=0.95 if temperature else 1.0,
        max_tokens=400,
        stop=END_OF_SQL_BLOCK,
        n=n,
        seed=task.settings.llm.seed if seed is None else seed,
    )
    return [extract_sql(text) for text in completion.texts]
