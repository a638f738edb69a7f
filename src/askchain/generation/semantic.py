"""The semantic generator: the model picks measures, dimensions and a window from a domain's governed semantic model
as a short JSON object, decoded under a grammar that admits only names that exist, and the semantic layer writes the
SQL. Choosing from a closed list is an easier task for a small model than writing GoogleSQL, and fewer tokens.

A question the catalog cannot express is answered `{"needs_sql": true}`: the free-SQL generators take it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from askchain.errors import SemanticQueryError, describe
from askchain.generation.candidates import Candidate
from askchain.generation.context import SemanticContext, SemanticExample
from askchain.generation.semantic_doubt import (
    reason_to_doubt, without_counts_of_unnamed_flags, without_filters_a_share_counts, without_grouped_counts,
    without_unnamed_dimensions, without_unnamed_flags, without_unnamed_measures, without_values_no_row_has)
from askchain.generation.semantic_fit import (
    averaged_per_period_when_asked, compared_with_previous_when_asked, compares_with_previous, fitted,
    in_the_window_named, moving_average_when_asked, plan_fitted, running_total_when_asked, share_of_total_when_asked,
    step_questions, window_stated, with_the_filters_named)
from askchain.generation.semantic_measures import (
    asks_for_share_of_a_part, count_threshold_when_asked, per_one_when_asked,
    count_when_asked, dimension_named_at_length, measure_in_the_unit_asked, measure_named_at_length,
    share_of_part_when_asked, share_only_when_asked)
from askchain.prompts import load_prompt
from askchain.semantic.governed.plans import MAX_STEPS, compile_plan, is_plan
from askchain.semantic.governed.reading import TIME_DIMENSIONS

if TYPE_CHECKING:
    from askchain.config import GeneratorSettings
    from askchain.generation.context import GenerationContext
    from askchain.llm.base import ChatModel
    from askchain.semantic.governed import SemanticModel

GENERATOR = "semantic"
#: The reply that hands a question to the free-SQL generators.
NEEDS_SQL = {"type": "object", "properties": {"needs_sql": {"type": "boolean", "const": True}},
             "required": ["needs_sql"], "additionalProperties": False}


def catalog_text(model: SemanticModel) -> str:
    """The catalog in a few tokens a name: each model's row, then its measures (with units) and dimensions."""
    lines = []
    for entry in model.catalog()["models"]:
        lines.append(f"- {entry['name']}: {entry['description'].split(':')[0]}")
        lines.append("  measures: " + ", ".join(_named(f) for f in entry["measures"]))
        lines.append("  dimensions: " + ", ".join(_named(f) for f in entry["dimensions"]))
    return "\n".join(lines)


def _named(entry: dict) -> str:
    unit = entry.get("unit") or ""
    return f"{entry['name']} ({unit})" if unit and unit not in ("count", "number", "timestamp") else entry["name"]


def matching_names(model: SemanticModel, question: str, k: int) -> list[str]:
    """The `k` measures (and dimensions, by two words or more) whose name or synonyms the question writes, longest
    phrase first, as `model.name (unit): description`: the catalog is long for a small model, and these are its
    likeliest picks."""
    asked = f" {' '.join(re.findall(r'[a-z0-9]+', question.lower()))} "
    scored = []
    for entry in model.catalog()["models"]:
        for kind, least in (("measures", 1), ("dimensions", 2)):  # a dimension's one word ("day") says little
            for field in (f for f in entry[kind] if f["name"] not in TIME_DIMENSIONS):  # the examples show grains
                phrases = [field["name"].replace("_", " "), *field.get("synonyms", ())]
                words = max((len(p.split()) for p in phrases if f" {p.lower()} " in asked), default=0)
                if words >= least:
                    scored.append((-words, len(scored), f"{entry['name']}.{_named(field)}: {field['description']}"))
    return [text for *_, text in sorted(scored)[:k]]


def windows_text(model: SemanticModel) -> str:
    return "; ".join(f"{w['name']} = {w['description']}" for w in model.catalog()["windows"])


def load_examples(path: Path | None, pool_files: Sequence[Path] = ()) -> list[SemanticExample]:
    """The domain's verified examples (question and semantic query), and each other pool question of `pool_files`
    (rows of split `pool`) as one that needs SQL: the nearest examples then show when to hand a question on."""
    if path is None or not path.is_file():
        return []
    examples = [SemanticExample(row["question"], row["query"]) for row in _rows(path)]
    expressed = {e.question for e in examples}
    return examples + [SemanticExample(row["question"], {"needs_sql": True})
                       for file in pool_files for row in _rows(file)
                       if row.get("split") == "pool" and row["question"] not in expressed]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def nearest_examples(question: str, examples: list[SemanticExample], k: int) -> list[SemanticExample]:
    """The `k` examples whose questions are nearest `question` (MiniLM, as example retrieval embeds them); the
    question itself is never its own example."""
    from askchain.retrieval.embedding import embed

    own = " ".join(question.split()).casefold()
    shown = [i for i, e in enumerate(examples) if " ".join(e.question.split()).casefold() != own]
    if not shown or k <= 0:
        return []
    scores = _question_vectors(tuple(e.question for e in examples))[shown] @ embed([question])[0]
    order = sorted(range(len(shown)), key=lambda i: -float(scores[i]))
    return [examples[shown[i]] for i in order[:k]]


def examples_for(question: str, examples: list[SemanticExample], k: int, plans: bool) -> list[SemanticExample]:
    """The `k` nearest examples; where the reply may be a plan, the two nearest plans among them, shown last (a
    plan's shape is what a small model copies, and few pool questions need one); elsewhere no plan, which the
    grammar would not admit."""
    if not plans:
        return nearest_examples(question, [e for e in examples if not is_plan(e.query)], k)
    nearest = nearest_examples(question, examples, k)
    planned = nearest_examples(question, [e for e in examples if is_plan(e.query)], min(2, k))
    return [e for e in nearest if e not in planned][:k - len(planned)] + planned


@lru_cache(maxsize=4)
def _question_vectors(questions: tuple[str, ...]):
    """The examples' embeddings, made once per process (seconds for the pool), not once per question."""
    from askchain.retrieval.embedding import embed

    return embed(list(questions))


def reply_schema(model: SemanticModel, plans: bool = False) -> dict:
    """A semantic query on one of the models, a plan of such queries where `plans` admits one, or the answer that
    the question needs SQL."""
    queries = model.json_schema()["anyOf"]
    plan = {"type": "object", "properties": {"steps": {"type": "array", "items": {"anyOf": queries}, "minItems": 2,
                                                       "maxItems": MAX_STEPS}},
            "required": ["steps"], "additionalProperties": False}
    return {"anyOf": [*queries, *([plan] if plans else []), NEEDS_SQL]}


def semantic(ctx: GenerationContext, model: ChatModel, cfg: GeneratorSettings, seed: int, execute) -> list[Candidate]:
    """Semantic queries compiled to SQL, each candidate carrying its reading (and its doubt, with one vote, where
    askchain.generation.semantic_doubt finds it may not answer its question); a query the layer rejects is asked
    again (up to `revisions` times) with the layer's own message. Where a plan was offered and what came back never
    compiled, one query is asked for instead (a question a plan was offered for may need none). None where the
    database has no semantic model or the model says the question needs SQL."""
    context = ctx.semantic
    if context is None:
        return []
    candidates, failed = _compiled_replies(ctx, context, model, cfg, seed)
    if context.plans and failed and not candidates:
        single = [e for e in context.examples if not is_plan(e.query)]
        candidates, _ = _compiled_replies(ctx, replace(context, plans=False, examples=single), model, cfg, seed)
    return candidates


def _compiled_replies(ctx: GenerationContext, context: SemanticContext, model: ChatModel, cfg: GeneratorSettings,
                      seed: int) -> tuple[list[Candidate], bool]:
    """The candidates of the model's replies, and whether some reply never compiled (not one that needs SQL)."""
    prompt = _messages(ctx, context)
    schema = reply_schema(context.model, context.plans)
    budget = cfg.max_tokens * (MAX_STEPS if context.plans else 1)  # a plan writes up to MAX_STEPS queries
    completion = model.complete(prompt, temperature=cfg.temperature, top_p=cfg.top_p, max_tokens=budget,
                                n=cfg.n, seed=seed, json_schema=schema)
    fit = QuestionFit(context, ctx.question) if cfg.options.get("fit_to_question", True) else None
    candidates, failed = [], False
    for text in completion.texts:
        compiled, error = compile_reply(context.model, text, fit)
        for _ in range(int(cfg.options.get("revisions", 1)) if error else 0):
            text = model.complete(_revision(prompt, text, error), temperature=0.0, max_tokens=budget,
                                  seed=seed, json_schema=schema).text
            compiled, error = compile_reply(context.model, text, fit)
            if not error:
                break
        failed = failed or error is not None
        if compiled is not None:  # the query as written is its reasoning; its reading says what it measures
            doubt = next(filter(None, (reason_to_doubt(context.model, step.model_dump(), ctx.question)
                                       for step in getattr(compiled.query, "steps", [compiled.query]))), "")
            candidates.append(Candidate(compiled.sql, GENERATOR, text.strip(), reading=compiled.reading, doubt=doubt,
                                        votes=1 if doubt else int(cfg.options.get("weight", 1))))
    return candidates, failed


def fitted_to(context: SemanticContext, query: dict, question: str, window: bool = True) -> dict:
    """`query` fitted to its question's words (askchain.generation.semantic_fit), to the one period (`window`: false
    for a step of a plan whose steps have windows of their own, which keeps a window the question states) and the
    governed filters they name, to the measure and dimension they name at length, the measure in the unit they ask
    for or of rows per one of something, the count of rows they ask for beside others or put a bound on
    (askchain.generation.semantic_measures), with the running totals, moving averages, averages per period, shares
    of the total or of a part or comparison with the period before they ask for, and without measures, splits or
    true/false filters nobody asked for, measures counting a flag nobody named, filters a share counts itself or
    values no row has (askchain.generation.semantic_doubt)."""
    if not isinstance(query, dict):
        return query  # the layer says what is wrong with it
    spec = context.model.specs.get(query.get("model", ""))
    query = without_unnamed_flags(context.model, fitted(query, question), question)
    query = without_unnamed_dimensions(context.model, query, question)
    query = without_values_no_row_has(context.model, without_filters_a_share_counts(context.model, query))
    named = window or not window_stated(query.get("window"), question)
    query = in_the_window_named(query, context.window if named and spec is not None and spec.time else None)
    if spec is not None:
        query = share_only_when_asked(measure_named_at_length(query, question, spec), question, spec)
        query = dimension_named_at_length(query, question, spec)
        query = per_one_when_asked(measure_in_the_unit_asked(query, question, spec), question, spec)
        query = running_total_when_asked(with_the_filters_named(query, context.filters, spec), question, spec)
        query = moving_average_when_asked(query, question, spec)
        query = averaged_per_period_when_asked(query, question, spec)
    query = without_counts_of_unnamed_flags(context.model, without_grouped_counts(context.model, query), question)
    query = without_unnamed_measures(context.model, query, question)
    if spec is None:
        return query
    query = count_threshold_when_asked(count_when_asked(query, question, spec), question, spec)
    query = share_of_total_when_asked(query, question, spec)
    query = share_of_part_when_asked(query, question, spec)
    return compared_with_previous_when_asked(query, question, context.compared, context.model.windows)


@dataclass(frozen=True)
class QuestionFit:
    """How a reply is fitted to its question: a query to the question's words (`fitted_to`); a plan as a whole
    (askchain.generation.semantic_fit.plan_fitted), then each step to the clause it answers
    (askchain.generation.semantic_fit.step_questions) in the window the whole question names."""

    context: SemanticContext
    question: str

    def query(self, query: dict, window: bool = True) -> dict:
        return fitted_to(self.context, query, self.question, window)

    def plan(self, plan: dict) -> tuple[dict, Callable[[dict, int], dict]]:
        """The plan fitted as a whole, and the fit of its step `number`."""
        plan = plan_fitted(plan, self.question)
        clauses, one_window = step_questions(plan, self.question), _one_window(plan)

        def step(query: dict, number: int) -> dict:
            whole = fitted_to(self.context, query, self.question, one_window)
            if number not in clauses or not isinstance(query, dict):
                return whole
            own = fitted_to(self.context, query, clauses[number], one_window)
            # a clause asking about the rows found names no period ("how much did they burn"): the question does
            own = {key: value for key, value in own.items() if key != "window"}
            return {**own, "window": whole["window"]} if "window" in whole else own

        return plan, step


def compile_reply(model: SemanticModel, text: str, fit: QuestionFit | None = None):
    """(compiled query, None), (None, the layer's reason) or (None, None) for a question that needs SQL; `fit` fits
    the query, or the plan and then each of its steps, to its question first (askchain.generation.semantic_fit)."""
    try:
        reply = json.loads(text)
    except ValueError:
        return None, "the reply is not one JSON object"
    if isinstance(reply, dict) and reply.get("needs_sql"):
        return None, None
    try:
        if is_plan(reply):
            reply, fit_step = fit.plan(reply) if fit else (reply, lambda query, number: query)
            return compile_plan(model, reply, lambda query, number: normalised(fit_step(query, number))), None
        reply = normalised(fit.query(reply) if fit else reply)
        return model.compile(reply), None
    except SemanticQueryError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - the library fails in many ways on a query it cannot build; never the question
        return None, describe(exc)


def _one_window(plan: dict) -> bool:
    """Whether every step of a plan has the same window: then the one the question names fits them all; steps in
    windows of their own read a question naming two periods (the top of 30 days, then each of the last 7)."""
    steps = plan.get("steps") if isinstance(plan.get("steps"), list) else []
    return len({json.dumps(s.get("window") if isinstance(s, dict) else None, sort_keys=True) for s in steps}) <= 1


def normalised(reply: dict) -> dict:
    """The query with each measure and dimension named once, and without ordering keys it does not select (an order
    by a day the query does not group by): neither is part of its meaning, and the layer would reject it whole."""
    names = {key: list(dict.fromkeys(reply[key])) for key in ("measures", "dimensions") if isinstance(reply.get(key), list)}
    reply = {**reply, **names}
    selected = {*reply.get("measures", []), *reply.get("dimensions", [])}
    if isinstance(reply.get("order_by"), list):
        reply["order_by"] = [o for o in reply["order_by"] if isinstance(o, dict) and o.get("field") in selected]
    return reply


def _messages(ctx: GenerationContext, context: SemanticContext):
    examples = "".join(f"Question: {e.question}\n{json.dumps(as_picked(e.query), separators=(', ', ': '))}\n\n"
                       for e in context.examples)
    matches = "".join(f"- {line}\n" for line in context.matching)
    return load_prompt("askchain.generation", "semantic").render(
        catalog=catalog_text(context.model), windows=windows_text(context.model),
        examples=f"Examples:\n{examples}" if examples else "",
        matching=f"Names the question's words match:\n{matches}\n" if matches else "", question=ctx.question,
        plans=_plan_rule() if context.plans else "", compared=_compared_rule(context, ctx.question),
        share=_share_rule(ctx.question),
    )


def _compared_rule(context: SemanticContext, question: str) -> str:
    """How to answer a question setting a period against the one before it, shown only for one: a model that reads
    "compared with" as a comparison of rows the catalog cannot express would hand it to free SQL."""
    if not compares_with_previous(question, context.compared, context.model.windows):
        return ""
    window = json.dumps(context.compared, sort_keys=True, separators=(", ", ": "))
    return load_prompt("askchain.generation", "semantic_compared").render(window=window)[0]["content"] + "\n"


def _share_rule(question: str) -> str:
    """How to ask for the share a part holds, shown only where the question asks what share of something a part of
    it holds: a small model reaches for a ready-made share measure of another part (the failed share for "what
    fraction of transactions moved no ETH")."""
    if not asks_for_share_of_a_part(question):
        return ""
    return load_prompt("askchain.generation", "semantic_share").render()[0]["content"] + "\n"


def _plan_rule() -> str:
    """How to write a plan, shown only where the question may need one (a single query is the usual reply)."""
    return load_prompt("askchain.generation", "semantic_plan").render()[0]["content"] + "\n"


def as_picked(query: dict) -> dict:
    """An example's query (or each step of its plan) as the model picks it: without the keys fitting sets from the
    question's words, which the grammar does not admit; the part whose share is asked is a filter like the others
    (askchain.generation.semantic_measures.share_of_part_when_asked finds it among them)."""
    from askchain.semantic.governed.query import SET_FROM_WORDS

    if is_plan(query):
        return {"steps": [as_picked(step) for step in query["steps"]]}
    picked = {key: value for key, value in query.items() if key not in SET_FROM_WORDS}
    if query.get("share_where"):
        picked["filters"] = [*query.get("filters", []), *query["share_where"]]
    return picked


def _revision(prompt, reply: str, error: str):
    """The prompt, the rejected query, and the layer's reason."""
    messages = [*prompt, {"role": "assistant", "content": reply},
                {"role": "user", "content": f"The semantic layer rejected that query: {error}\nReply with a corrected query."}]
    return prompt.with_messages(messages)
