"""The baseline: one prompt (schema and instructions first, question last) -> SQL -> safe execution."""

from __future__ import annotations

from askchain.generation.sql_text import extract_sql
from askchain.pipeline.context import Task
from askchain.prompts import load_prompt


def baseline_messages(task: Task):
    return load_prompt("askchain.pipeline", "baseline").render(
        dialect_label=task.dialect_label,
        schema=task.schema_text(),
        notes=task.notes_text(),
        question=task.question_text,
    )


def generate_baseline(task: Task, *, temperature: float = 0.0, n: int = 1, seed: int | None = None) -> list[str]:
    """Candidate SQL from the baseline prompt: greedy by default, `n` samples when temperature > 0."""
    completion = task.model.complete(
        baseline_messages(task),
        temperature=temperature,
        top_p=0.95 if temperature else 1.0,
        max_tokens=400,
        n=n,
        seed=task.settings.llm.seed if seed is None else seed,
    )
    return [extract_sql(text) for text in completion.texts]
