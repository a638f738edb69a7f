"""Candidate SQL and the generators that produce it: each keeps its strategy's idea in a short, structured form.

Measured on the 1.5B model, a free-form chain of thought costs ten times the tokens and loses accuracy, so
each strategy here reasons in a few comment lines or a small JSON object and is checked by execution.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Literal

from pydantic import BaseModel

from askchain.config import GeneratorSettings
from askchain.db.base import QueryResult
from askchain.generation.context import Example, GenerationContext
from askchain.generation.sql_text import END_OF_SQL_BLOCK, extract_sql, normalize_sql
from askchain.llm.base import ChatModel
from askchain.prompt_data import data_cell, escape_text, quote_error
from askchain.resources import Bounded

Executor = Callable[[str], "tuple[QueryResult | None, str | None]"]


@dataclass
class Candidate:
    sql: str
    generator: str
    reasoning: str = ""
    parent: str | None = None  # the SQL this one revises
    round: int = 0
    votes: int = 1  # samples that wrote this same query (after de-duplication)
    repairs: tuple[str, ...] = ()  # what askchain repaired in what the model wrote (pipeline.stages.repairer)
    repaired_by: tuple[str, ...] = ()  # the ids of the rules that made those repairs
    #: What a compiled candidate measures and how, in words (a semantic query's reading: measure, unit, window).
    reading: str = ""
    #: Why the candidate may not answer its question although it runs (askchain.generation.semantic_doubt): it
    #: answers only once another generator confirms its result.
    doubt: str = ""

    def key(self, dialect: str) -> str:
        return normalize_sql(self.sql, dialect)


def _comment_lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip().startswith("--"))


def _sample(ctx: GenerationContext, model: ChatModel, cfg: GeneratorSettings, seed: int, prompt: str, name: str, **values) -> list[Candidate]:
    completion = model.complete(
        ctx.messages("askchain.generation", prompt, **values),
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        max_tokens=cfg.max_tokens,
        stop=END_OF_SQL_BLOCK,
        n=cfg.n,
        seed=seed,
    )
    return [Candidate(extract_sql(text), name, _comment_lines(text.split("```sql")[-1]) or "") for text in completion.texts]


def direct(ctx, model, cfg, seed, execute) -> list[Candidate]:
    """The plain prompt sampled at temperature: cheap, and the strongest single strategy for small models."""
    return _sample(ctx, model, cfg, seed, "direct", "direct")


def divide_and_conquer(ctx, model, cfg, seed, execute) -> list[Candidate]:
    """Decompose into at most three sub-questions (one comment line each), then assemble the query."""
    return _sample(ctx, model, cfg, seed, "divide_and_conquer", "divide_and_conquer")


def query_plan(ctx, model, cfg, seed, execute) -> list[Candidate]:
    """A one-line plan (tables -> joins -> filters -> grouping -> output -> order) before the query."""
    return _sample(ctx, model, cfg, seed, "query_plan", "query_plan")


# Structured replies carry no length bounds: llama.cpp turns them into grammars too large to compile;
# max_tokens bounds the reply instead.
class Critique(BaseModel):
    verdict: Literal["correct", "wrong"]
    problem: str = ""


def role_play(ctx, model, cfg, seed, execute) -> list[Candidate]:
    """A PhD student writes the SQL; a professor only critiques it (seeing its result) until they agree."""
    rounds = int(cfg.options.get("rounds", 1))
    drafts = _sample(ctx, model, cfg, seed, "student", "role_play", critique="")
    finals = []
    for i, draft in enumerate(drafts):
        for r in range(rounds):
            result, error = execute(draft.sql)
            preview = quote_error(error) if error else result_preview(result)
            review = model.complete(
                ctx.messages("askchain.generation", "professor", sql=draft.sql, preview=preview),
                temperature=0.0, max_tokens=80, response_model=Critique, seed=seed,
            ).parsed[0]
            if review is None or review.verdict == "correct":
                break
            critique = f"\n-- Your previous query:\n{draft.sql}\n-- Your professor says: {review.problem}\n-- Write a corrected query."
            redo = model.complete(
                ctx.messages("askchain.generation", "student", critique=critique),
                temperature=cfg.temperature, top_p=cfg.top_p, max_tokens=cfg.max_tokens, stop=END_OF_SQL_BLOCK,
                seed=seed + 100 * (r + 1) + i,
            )
            draft = Candidate(extract_sql(redo.text), "role_play", f"-- professor: {review.problem}", parent=draft.sql)
        finals.append(draft)
    return finals


class SyntheticExample(BaseModel):
    question: str
    sql: str


class SyntheticExamples(BaseModel):
    examples: list[SyntheticExample]


#: Examples written per (model, schema), bounded: a server answering over many databases must not grow it forever.
_synthetic_memo: Bounded[list[Example]] = Bounded(16)


def synthetic_examples(ctx: GenerationContext, model: ChatModel, count: int, execute: Executor) -> list[Example]:
    """CHASE-SQL's online examples, written once per schema (memoised; the response cache keeps them on disk)
    and kept only if they run and return rows."""

    def write() -> list[Example]:
        schema_only = GenerationContext(ctx.question, ctx.dialect, ctx.dialect_label, ctx.schema_text, ctx.notes)
        reply = model.complete(
            schema_only.messages("askchain.generation", "synthetic_examples", count=count),
            temperature=0.0, max_tokens=90 * count, response_model=SyntheticExamples,
        ).parsed[0]
        examples = []
        for ex in (reply.examples if reply else []):
            result, error = execute(ex.sql)
            if error is None and result is not None and result.rows:
                examples.append(Example(ex.question, ex.sql))
        return examples

    return _synthetic_memo.get((model.model_id, ctx.schema_text), write)


def synthetic(ctx, model, cfg, seed, execute) -> list[Candidate]:
    examples = synthetic_examples(ctx, model, int(cfg.options.get("examples", 6)), execute)
    if not examples:
        return []
    shown = "\n".join(f"-- Q: {ex.question}\n{ex.sql.strip()}" for ex in examples)
    return _sample(ctx, model, cfg, seed, "synthetic", "synthetic", synthetic=shown)


def result_preview(result: QueryResult | None, rows: int = 5) -> str:
    if result is None:
        return "(not run)"
    if not result.rows:
        return "(no rows)"
    shown = "; ".join(", ".join(data_cell(v, 40) for v in row) for row in result.rows[:rows])
    more = f" … {len(result.rows) - rows} more" if len(result.rows) > rows else ""
    return f"columns ({escape_text(', '.join(result.columns))}): {shown}{more}"


#: The generators that write SQL themselves (askchain.generation.registry adds the semantic one).
SQL_GENERATORS: dict[str, Callable] = {
    "direct": direct,
    "divide_and_conquer": divide_and_conquer,
    "query_plan": query_plan,
    "role_play": role_play,
    "synthetic": synthetic,
}


def dedupe(candidates: list[Candidate], dialect: str) -> list[Candidate]:
    """Merge candidates by their normalised sqlglot form, keeping the first of each with the votes of all."""
    unique: dict[str, Candidate] = {}
    for cand in candidates:
        if not cand.sql.strip():
            continue
        key = cand.key(dialect)
        kept = unique.get(key)
        unique[key] = cand if kept is None else replace(kept, votes=kept.votes + cand.votes)
    return list(unique.values())


