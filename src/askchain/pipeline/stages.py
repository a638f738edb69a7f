"""The stages of answering one question, as plain functions of the graph's state and the question's run.

Each returns (state update, what the trace keeps of it) and may stream events to the caller (`emit`). Every method
is these stages in one graph (askchain.pipeline.graph), configured differently: the baseline and self-consistency
switch retrieval and validation off and sample the direct prompt once or six times (`methods:` in settings.yaml), so
their graph is a chain, run without LangGraph (askchain.pipeline.flow).
"""

from __future__ import annotations

import logging
import operator
from dataclasses import replace
from typing import Annotated, Any, Callable, Sequence, TypedDict

from askchain.answer import chart_spec, rewrite_followup, summarize
from askchain.config import Settings
from askchain.db.base import QueryResult
from askchain.db.schema import Schema
from askchain.domain import domain_of
from askchain.errors import ConfigError
from askchain.generation.candidates import Candidate, dedupe
from askchain.generation.context import Example, GenerationContext, SemanticContext
from askchain.generation.registry import GENERATORS
from askchain.generation.sql_text import normalize_sql
from askchain.llm.base import Message
from askchain.pipeline import abstain, confidence as confidence_rules
from askchain.pipeline.coverage import Coverage, coverage
from askchain.pipeline.events import emit
from askchain.pipeline.plan import StepResult, earlier_results, may_need_a_plan, may_need_steps, plan_steps
from askchain.pipeline.revise import Execution, execute_candidates, revision_loop
from askchain.pipeline.run import Run
from askchain.pipeline.select import Selection, group_by_result, result_signature, select_best
from askchain.rules.repairs.shorthands import ExpandShorthands, write_short
from askchain.pipeline.trace import Trace
from askchain.pipeline.validate import asked, validate_for_question
from askchain.retrieval.schema import estimate_tokens, link_schema
from askchain.rules.analysis import Analysis
from askchain.rules.base import Findings, Rule, repair_all
from askchain.rules.registry import repairs, rules_for
from askchain.semantic import Layer, Reading, Shorthand, compared_window, named_filters, named_window

StageOutput = tuple[dict[str, Any], dict[str, Any]]

log = logging.getLogger(__name__)


class State(TypedDict, total=False):
    question: str  # as asked, then as rewritten when it follows up an earlier turn
    follow_up: bool
    plan: list[str]  # the question's steps; one: the question itself
    semantic_plan: bool  # the semantic generator may answer with a plan of governed queries (the plan stage says)
    steps: list[dict[str, Any]]  # a multi-step plan's steps as answered: question, SQL, row count
    examples: list[Example]
    linked: dict[str, list[str]]
    value_hints: list[str]
    definitions: list[Reading]
    context: GenerationContext
    coverage: Coverage
    candidates: list[Candidate]  # the draft's samples
    generated: Annotated[list[Candidate], operator.add]  # the other generators' candidates
    drafts: list[Execution]
    agreed: bool  # go straight to selection: the draft agreed, or the lead stood
    stood: bool  # a lead no sample confirmed or challenged: no agreement behind it (confidence)
    executions: list[Execution]
    selection: Selection
    abstention: abstain.Abstention  # set when the data cannot answer the question: no SQL, this answer
    confidence: dict[str, Any]  # level, reasons, alternatives
    answer: dict[str, Any]


# ---- context retrieval --------------------------------------------------------------------------------------------

def rewrite(state: State, run: Run) -> StageOutput:
    """A follow-up ("and only for USDT?") made self-contained, so every later stage sees one question."""
    asked = rewrite_followup(state["question"], run.history, run.models.factual)
    emit({"type": "rewrite", "original": state["question"], "question": asked})
    return {"question": asked}, {"question": asked}


def plan(state: State, run: Run) -> StageOutput:
    """Whether the question needs several queries, and which (askchain.pipeline.plan); a question without the words
    that mark a dependent step, or one the domain's semantic layer answers in one query (two periods side by side), is
    one step without a model call (`planner: rules`), and so is one the semantic generator may answer with a plan of
    governed queries (`semantic_plans`)."""
    question = state["question"]
    if semantic_plans(question, run):  # the semantic generator writes the plan as queries the layer composes
        return {"plan": [question], "semantic_plan": True}, \
            {"steps": [question], "planned": False, "semantic_plan": True}
    if run.settings.pipeline.planner == "rules" and (not may_need_steps(question) or _one_query(question, run)):
        return {"plan": [question]}, {"steps": [question], "planned": False}
    steps = plan_steps(question, run.schema, run.models.factual, run.settings.pipeline.plan_max_steps,
                       run.settings.llm.seed)
    if len(steps) > 1:
        emit({"type": "plan", "steps": steps})
    return {"plan": steps}, {"steps": steps, "planned": True}


def semantic_plans(question: str, run: Run) -> bool:
    """Whether the semantic generator may answer with a plan of queries (askchain.semantic.governed.plans): the
    planner is on, the question's words mark a dependent step or a set found first and no entry of the layer
    answers it in one query (or `planner: always`), and the domain's semantic generator leads."""
    planner = run.settings.pipeline.planner
    if planner == "never" or (planner == "rules" and (not may_need_a_plan(question) or _one_query(question, run))):
        return False
    domain = domain_of(run.schema.name)
    return leads(run) and domain is not None and domain.semantic_model_file is not None


def _one_query(question: str, run: Run) -> bool:
    """Whether the semantic layer (where it is on) answers the question in one query."""
    layer = domain_layer(run) if run.settings.pipeline.semantic_layer else None
    return layer is not None and any(reading.entry.single_query for reading in layer.match(question))


def run_steps(state: State, run: Run, answer_one: Callable[..., State]) -> StageOutput:
    """A multi-step plan, step by step, each through the whole single-question pipeline (`answer_one`: retrieval,
    candidates, revision, selection, confidence) with the earlier steps' results in its hint. The last step's result
    answers the question; the answer is as sure as the least sure step. A step the data cannot answer ends the plan
    in an abstention, and one that fails or finds nothing ends it where it is: the later steps would have nothing to
    build on. When such a step follows steps that found rows, the last of those answers, with low confidence: what
    was found stands, and the reasons say which step failed (its queries failing is not the data lacking something)."""
    cfg = run.settings.pipeline
    one_query = run.settings.with_overrides(pipeline={"planner": "never", "answer": False})
    done: list[StepResult] = []
    traced: list[dict[str, Any]] = []
    judged: list[dict[str, Any]] = []
    final: State = {}
    answered: State = {}  # the state of the last step that found rows
    for number, question in enumerate(state["plan"], 1):
        hint = "\n".join(part for part in (run.hint, earlier_results(done, cfg.plan_preview_rows) if done else "") if part)
        trace = Trace(f"step{number}", question, run.engine.name, "pipeline", run.models.model_id)
        step_run = replace(run, question=question, hint=hint, history=(), settings=one_query, trace=trace)
        emit({"type": "step", "step": number, "question": question, "status": "start"})
        final = answer_one(step_run, lambda event, number=number: emit({**event, "step": number}))
        abstention = final.get("abstention")
        sql, result, error = (None, None, abstention.text) if abstention else chosen_result(final["selection"])
        done.append(StepResult(question, run.engine.qualified_sql(sql), result, error))
        traced.append({**done[-1].record(), "stages": trace.stages})
        emit({"type": "step", "step": number, **done[-1].record(), "status": "end"})
        if abstention and not (answered and abstention.from_failures):
            return {"abstention": abstention, "steps": [d.record() for d in done]}, {"steps": traced}
        if error or not (result and result.rows):
            if answered:
                final = answered
                judged.append({"level": "low", "alternatives": answered["confidence"]["alternatives"], "step": number,
                               "reasons": [f"it failed ({error or 'no rows'}), so the answer is step {number - 1}'s"]})
            else:
                judged.append({**final["confidence"], "step": number})
            break
        judged.append({**final["confidence"], "step": number})
        answered = final
    least = min(confidence_rules.LEVELS.index(c["level"]) for c in judged)
    last = judged[-1]  # the alternatives shown are those of the step that answers
    sure = {"level": confidence_rules.LEVELS[least],
            "alternatives": last["alternatives"] if confidence_rules.LEVELS.index(last["level"]) == least else [],
            "reasons": [f"step {c['step']}: {reason}" for c in judged for reason in c["reasons"]]}
    emit({"type": "confidence", **sure})
    update = {key: final[key] for key in ("selection", "executions", "drafts", "definitions") if key in final}
    return {**update, "confidence": sure, "steps": [d.record() for d in done]}, {"steps": traced}


def example_scope(settings: Settings, schema: Schema) -> str | None:
    """The database whose examples alone are shown (examples_scope: schema), or None for the whole pool."""
    return schema.db_id if settings.pipeline.examples_scope == "schema" else None


def find_examples(state: State, run: Run) -> StageOutput:
    from askchain.retrieval.examples import retrieve_examples

    cfg = run.settings.pipeline
    schema = run.schema
    found = retrieve_examples(
        state["question"], cfg.examples_k, exclude_db=run.db_id, exclude_question=state["question"],
        only_db=example_scope(run.settings, schema),
        schema=schema, model=run.models.factual if cfg.skeleton == "llm" else None, settings=run.settings,
    )
    examples = [Example(e.question, run.engine.prompt_sql(e.sql), e.db_id) for e in found]
    return {"examples": examples}, {"examples": examples}


def link(state: State, run: Run) -> StageOutput:
    """Tables and columns relevant to the question; empty means the whole schema is kept (`auto` links only
    schemas too large to show whole)."""
    linked: dict[str, list[str]] = {}
    if links_schema(run):
        linked = link_schema(state["question"], run.schema, run.models.factual, hint=run.hint).columns
    return {"linked": linked}, {"linked": linked}


def links_schema(run: Run) -> bool:
    """Whether questions see a linked subset of the schema: always, or (`auto`) when the whole one is too long."""
    cfg = run.settings.pipeline
    return cfg.schema_linking == "always" or estimate_tokens(run.schema.ddl()) > cfg.linking_token_budget


def find_values(state: State, run: Run) -> StageOutput:
    from askchain.retrieval.values import retrieve_values

    cfg = run.settings.pipeline
    hints = retrieve_values(
        state["question"], run.resources.value_index(run.engine, run.settings), run.schema,
        model=run.models.factual if cfg.keywords == "llm" else None, hint=run.hint,
    )
    return {"value_hints": hints}, {"value_hints": hints}


def domain_layer(run: Run) -> Layer | None:
    """The semantic layer of the domain the database belongs to (none for a database of no domain)."""
    domain = domain_of(run.schema.name)
    return domain.semantic_layer() if domain else None


def find_definitions(state: State, run: Run) -> StageOutput:
    """The domain's semantic-layer entries the question calls for (metrics, entities, time conventions)."""
    layer = domain_layer(run)
    readings = layer.match(state["question"]) if layer else []
    return {"definitions": readings}, {"definitions": {r.entry.name: r.definition for r in readings}}


def build_context(state: State, run: Run) -> StageOutput:
    """The prompt prefix every generator, reviser and judge shares: the (linked) schema, notes, hints, examples; and
    how much of the question the schema speaks about, which abstention and confidence read."""
    schema = run.schema
    linked = state.get("linked") or {}
    question = f"{state['question']}\n-- Hint: {run.hint}" if run.hint else state["question"]
    short = shorthands(run)
    notes = "\n".join([write_short(schema.notes, short).rstrip(), *(f"- {s.note}" for s in short)]).strip()
    ctx = GenerationContext(
        question, run.dialect, run.dialect_label, schema.subset(linked).ddl() if linked else schema.ddl(), notes,
        value_hints=state.get("value_hints", []), db_id=schema.db_id,
        examples=[replace(e, sql=write_short(e.sql, short)) for e in state.get("examples", [])],
        definitions=[write_short(r.definition, short) for r in state.get("definitions", []) if r.definition],
        semantic=semantic_context(question, run, state.get("definitions", []), state.get("semantic_plan", False))
        if state["question"] else None,
    )
    covered = coverage(state["question"], schema, state.get("value_hints", []))
    return {"context": ctx, "coverage": covered}, {"schema_tokens": estimate_tokens(ctx.schema_text), "linked": linked}


def leads(run: Run) -> bool:
    """Whether a lead generator is configured and enabled (the semantic generator by default)."""
    cfg = run.settings.pipeline
    return cfg.lead_generator is not None and cfg.lead_generator in enabled_generators(cfg)


def semantic_context(question: str, run: Run, readings: Sequence[Reading] = (),
                     plans: bool = False) -> SemanticContext | None:
    """The domain's governed semantic model, the verified examples nearest the question, the one window and the
    filters its `readings` (the semantic layer's, of the question without its hint) name, and whether it may be
    answered by a plan (`plans`: the plan stage decided so), where the database's domain has a semantic model and
    the semantic generator leads."""
    domain = domain_of(run.schema.name)
    if not leads(run) or domain is None or domain.semantic_model_file is None:
        return None
    from askchain.generation.semantic import examples_for, load_examples, matching_names

    examples = load_examples(domain.semantic_examples_file, domain.example_files)
    k = int(run.settings.pipeline.generators[run.settings.pipeline.lead_generator].options.get("examples", 4))
    model = domain.semantic_model()
    return SemanticContext(model, examples_for(question, examples, k, plans), matching_names(model, question, k=6),
                           window=named_window(list(readings)), compared=compared_window(list(readings)),
                           filters=named_filters(list(readings)), plans=plans)


def schema_prompt_prefix(run: Run) -> list[Message] | None:
    """The prompt every question over this schema starts with (instructions, schema, notes; what follows is the
    question's own), or None where schema linking shows each question a schema of its own."""
    if links_schema(run):
        return None
    return build_context({"question": ""}, run)[0]["context"].prefix()


# ---- generation ---------------------------------------------------------------------------------------------------

def enabled_generators(run_settings) -> list[str]:
    """The generators a configuration samples, in settings order (their position seeds their samples)."""
    return [name for name, g in run_settings.generators.items() if g.enabled and g.n > 0 and name in GENERATORS]


def sample(name: str, state: State, run: Run, count: int | None = None, skip: int = 0) -> list[Candidate]:
    """`count` of the generator's samples (default: its n), from its `skip`-th on: the i-th sample has seed + i, so
    samples drawn in waves are the ones drawn at once."""
    cfg = run.settings.pipeline
    enabled = enabled_generators(cfg)
    offset = 0 if name == cfg.draft_generator else enabled.index(name) + 1
    settings = cfg.generators[name]
    if count is not None:
        settings = settings.model_copy(update={"n": count})
    repair = repairer(run, state)

    def execute(sql: str):
        """What a generator runs itself (role play shows the result to its critic) runs as repaired, as its samples."""
        return run.execute(repair(Candidate(sql, name)).sql)

    made = GENERATORS[name](state["context"], run.models.creative, settings,
                            run.settings.llm.seed + 1000 * offset + skip, execute)
    made = [repair(candidate) for candidate in made]
    emit({"type": "candidates", "generator": name, "sql": [c.sql for c in made]})
    return made


def domain_rules(run: Run) -> list[Rule]:
    """The core rules and those of the database's domain, in order (askchain.rules), but those switched off."""
    return rules_for(domain_of(run.schema.name), run.settings.pipeline.rules_off)


def shorthands(run: Run) -> tuple[Shorthand, ...]:
    """The conditions the model may write as one call: prompts show them, and samples have them expanded; none for
    the methods that measure the model alone (no validation), which keep what it wrote and see the schema's notes."""
    if not run.settings.pipeline.validation:
        return ()
    return next((rule.shorthands for rule in domain_rules(run) if isinstance(rule, ExpandShorthands)), ())


def repairer(run: Run, state: State) -> Callable[[Candidate], Candidate]:
    """Each candidate repaired before validation by the repairs of askchain.rules, the core's and the domain's in
    their order; unchanged without validation (the methods that measure the model alone)."""
    if not run.settings.pipeline.validation:
        return lambda candidate: candidate
    rules, validate = repairs(domain_rules(run)), validator(run, state)
    analysis = Analysis("", run.schema, run.dialect, state["question"], asked(state["question"], run.hint),
                        state.get("definitions"), errors_of=lambda text: validate(text).errors)

    def repair(candidate: Candidate) -> Candidate:
        applied = repair_all(analysis.of(candidate.sql), rules)
        if not applied.notes:
            return candidate
        return replace(candidate, sql=applied.sql, repairs=tuple(applied.notes), repaired_by=tuple(applied.rules))

    return repair


def validator(run: Run, state: State) -> Callable[[str], Findings]:
    """Static checks before execution, the core's and the domain's (`validate_for_question`); none for the methods
    that measure the model alone."""
    if not run.settings.pipeline.validation:
        return lambda sql: Findings()
    rules = domain_rules(run)
    return lambda sql: validate_for_question(sql, run.schema, state["question"], rules, state.get("definitions"),
                                             hint=run.hint)


def lead(state: State, run: Run, validate: Callable[[str], Findings]) -> tuple[list[Candidate], list[Execution]]:
    """The lead generator's candidates (compiled by the semantic layer, so never repaired) and their executions."""
    if not leads(run):
        return [], []
    name = run.settings.pipeline.lead_generator
    made = GENERATORS[name](state["context"], run.models.creative, run.settings.pipeline.generators[name],
                            run.settings.llm.seed, run.execute)
    emit({"type": "candidates", "generator": name, "sql": [c.sql for c in made]})
    return made, execute_samples(made, [], validate, run)


def draft(state: State, run: Run) -> StageOutput:
    """The draft generator's samples, executed at once: when enough agree on one result, the other generators and
    revision would only confirm it, so the graph goes straight to selection (adaptive test-time compute). With
    `draft_first_wave`, that many samples are drawn first and the rest only when these do not all return one same
    result: most questions the samples agree on pay for a few samples, not all. A lead that ran to rows is the
    answer alone (`lead_confirmation: 0`) or once one of the first `lead_confirmation` samples returns its result
    (`doubted_lead_confirmation` for a doubted lead); otherwise it joins the whole draft's vote, unless fewer than
    `lead_challenge` of those samples agree on another result: then a lead not doubted stands on its own."""
    cfg = run.settings.pipeline
    validate = validator(run, state)
    led, led_runs = lead(state, run, validate)
    answered = [ex for ex in led_runs if not ex.failed]  # success: it ran to rows
    doubts = [ex.candidate.doubt for ex in answered if ex.candidate.doubt]
    confirmation = cfg.doubted_lead_confirmation if doubts else cfg.lead_confirmation
    if answered and confirmation == 0:
        return ({"candidates": led, "drafts": led_runs, "agreed": True},
                {"candidates": [c.sql for c in led], "samples": len(led), "agreed": True, "led": True,
                 "readings": [c.reading for c in led], "executions": [ex.record() for ex in led_runs]})
    total = cfg.generators[cfg.draft_generator].n
    wave = confirmation if answered else cfg.draft_first_wave
    first = wave if 0 < wave < total else total
    made = led + sample(cfg.draft_generator, state, run, count=first)
    executions = execute_samples(made, led_runs, validate, run)
    confirmed = bool(answered) and first < total and confirms(executions, answered, run.dialect)
    agreed = confirmed or (not answered and first < total and draft_agrees(executions, first, run.dialect))
    stood = first < total and not agreed and bool(answered) and not doubts and unchallenged(
        executions, answered, cfg.lead_challenge, run.dialect)
    if first < total and not (agreed or stood):
        made += sample(cfg.draft_generator, state, run, count=total - first, skip=first)
        executions = execute_samples(made, executions, validate, run)
    agreed = agreed or stood or draft_agrees(executions, cfg.agreement_exit, run.dialect)
    return ({"candidates": made, "drafts": executions, "agreed": agreed, "stood": stood},
            {"candidates": [c.sql for c in made], "samples": len(made), "agreed": agreed, "confirmed": confirmed,
             "stood": stood, "doubts": doubts, "executions": [ex.record() for ex in executions]})


def confirms(executions: list[Execution], answered: list[Execution], dialect: str) -> bool:
    """Whether a draft sample returned the result a lead candidate returned: two ways of writing the query agreeing."""
    leading = {ex.candidate.generator for ex in answered}
    results = {result_signature(ex, dialect) for ex in answered}
    return any(ex.status == "success" and ex.candidate.generator not in leading
               and result_signature(ex, dialect) in results for ex in executions)


def unchallenged(executions: list[Execution], answered: list[Execution], needed: int, dialect: str) -> bool:
    """Whether fewer than `needed` draft samples agree on one result (0: always challenged), asked once no sample
    confirmed the lead, so that result is another than the lead's: samples that fail or disagree among themselves
    are no evidence against a governed query."""
    leading = {ex.candidate.generator for ex in answered}
    others = [ex for ex in executions if ex.candidate.generator not in leading]
    return needed > 0 and not draft_agrees(others, needed, dialect)


def execute_samples(made: list[Candidate], known: list[Execution], validate: Callable[[str], Findings],
                    run: Run) -> list[Execution]:
    """Each distinct sample validated and run once, with the votes of all samples that wrote it; a query among
    `known` keeps its execution."""
    unique = dedupe(made, run.dialect)
    done = {ex.candidate.key(run.dialect): ex for ex in known}
    fresh = execute_candidates([c for c in unique if c.key(run.dialect) not in done], validate, run.execute)
    done.update((ex.candidate.key(run.dialect), ex) for ex in fresh)
    return [replace(done[c.key(run.dialect)], candidate=c) for c in unique]


def draft_agrees(executions: list[Execution], needed: int, dialect: str) -> bool:
    """Whether at least `needed` draft samples ran to one same non-empty result (0 = never stop early)."""
    groups = group_by_result(executions, dialect)
    return needed > 0 and bool(groups) and groups[0].votes >= needed


def generate(name: str, state: State, run: Run) -> StageOutput:
    made = sample(name, state, run)
    return {"generated": made}, {"candidates": [c.sql for c in made], "reasoning": [c.reasoning for c in made]}


# ---- revision, selection, answer ----------------------------------------------------------------------------------

def revise(state: State, run: Run) -> StageOutput:
    """Failing or empty candidates revised with their error, never running one query twice."""
    cfg = run.settings.pipeline
    unique = dedupe(state.get("candidates", []) + state.get("generated", []), run.dialect)
    rounds: list[list[dict]] = []

    def on_round(round_no: int, results: list[Execution]) -> None:
        rounds.append([ex.record() for ex in results])
        emit({"type": "revision", "round": round_no, "executions": rounds[-1]})

    executions = revision_loop(
        unique, ctx=state["context"], model=run.models.factual, key=lambda sql: normalize_sql(sql, run.dialect),
        validate=validator(run, state), execute=run.execute, rounds=cfg.revision_rounds, max_revisions=cfg.max_revisions,
        empty_answer_share=cfg.empty_answer_share, revise_beside_rows=cfg.revise_beside_rows,
        seed=run.settings.llm.seed, on_round=on_round, known=state.get("drafts", []), repair=repairer(run, state),
        shorten=lambda text: write_short(text, shorthands(run)),
    )
    return {"executions": executions}, {"unique_candidates": len(unique), "rounds": rounds}


def select(state: State, run: Run) -> StageOutput:
    """One result among the candidates' (vote or tournament); its SQL and rows stream before the answer's words."""
    cfg = run.settings.pipeline
    selection = select_best(
        state.get("executions") or state.get("drafts", []), ctx=state["context"], model=run.models.factual,
        method=cfg.selection, max_groups=cfg.selection_max_groups, majority_margin=cfg.majority_margin,
        empty_answer_share=cfg.empty_answer_share, seed=run.settings.llm.seed,
    )
    sql, result, error = chosen_result(selection)
    emit({"type": "selected", "sql": sql, "reason": selection.reason})
    emit({"type": "sql", "sql": run.engine.qualified_sql(sql), "dialect": run.dialect})
    emit({"type": "rows", "columns": result.columns if result else [], "rows": [list(r) for r in result.rows] if result else [],
          "row_count": len(result.rows) if result else 0, "truncated": bool(result and result.truncated), "error": error})
    record = {
        "reason": selection.reason,
        "groups": [{"size": len(g.members), "votes": g.votes, "score": g.score, "generators": g.generators,
                    "sql": g.representative.candidate.sql} for g in selection.groups],
        "matches": selection.matches,
        "chosen": sql,
    }
    return {"selection": selection}, record


def chosen_result(selection: Selection) -> tuple[str | None, QueryResult | None, str | None]:
    """The chosen SQL, its rows and its error. No rows is an answer, not an error: selection only chooses an empty
    result when most samples agree on it or nothing returned rows."""
    chosen = selection.chosen
    if chosen is None:
        return None, None, "no candidate SQL was produced"
    error = None if chosen.status in ("success", "empty") else (chosen.error or chosen.status)
    return chosen.candidate.sql, chosen.result, error


def answer(state: State, run: Run) -> StageOutput:
    """The result in words (checked against the rows) and a chart chosen from its shape."""
    sql, result, error = chosen_result(state["selection"])
    columns, rows = (result.columns, [list(r) for r in result.rows]) if result else ([], [])
    text = summarize(state["question"], sql, columns, rows, run.models.factual,
                     truncated=bool(result and result.truncated), error=error)
    try:
        chart = chart_spec(columns, rows) if rows and not error else None
    except ConfigError:  # the chart is optional: plotly comes with the server extra
        chart = None
    if state.get("steps"):
        text = "Answered in steps:\n" + "\n".join(
            f"{n}. {step['question']} ({confidence_rules.plural(step['row_count'], 'row')})"
            for n, step in enumerate(state["steps"], 1)) + "\n\n" + text
    readings = read_as(state)
    if readings and rows:
        text += "\n\n_Read as: " + "; ".join(readings) + "._"
    emit({"type": "answer", "text": text})
    emit({"type": "chart", "chart": chart})
    out = {"answer": text, "chart": chart, "readings": readings}
    return {"answer": out}, out


def read_as(state: State) -> list[str]:
    """How the question was read, in words, for the user to check: what the chosen query measures and how where it
    says so itself (a semantic query's measure, unit and window), else the conventions its definitions applied."""
    selection = state.get("selection")
    chosen = selection.chosen if selection else None
    if chosen is not None and chosen.candidate.reading:
        return [chosen.candidate.reading]
    return [r.reading for r in state.get("definitions", []) if r.reading]


# ---- abstention and confidence ------------------------------------------------------------------------------------

def answerable(state: State, run: Run) -> StageOutput:
    """Whether the data can answer the question at all, before any SQL is written: the concepts the domain declares
    absent; over a database no domain describes (`abstention: llm`), the factual model places the question's words
    no schema word spells in columns (askchain.pipeline.abstain). A question with no such word costs no model call."""
    question = state["question"]
    declared = abstain.domain_concepts(run.schema)
    found = abstain.declared_absent(question, declared)
    words: list[str] = []
    if not declared and run.settings.pipeline.abstention == "llm":
        words = abstain.concept_words(state["coverage"])
        missing = abstain.unplaced_words(question, words, state["context"], run.schema, run.models.factual,
                                         run.settings.llm.seed) if words else []
        if missing:
            found = abstain.Abstention(abstain.no_data_text(missing, run.schema), "model", ", ".join(missing))
    record = {"asked_about": words, "abstention": found.record() if found else None}
    if found is None:
        return {}, record
    emit_abstention(found)
    return {"abstention": found}, record


def emit_abstention(found: abstain.Abstention) -> None:
    emit({"type": "abstained", **found.record()})
    emit({"type": "answer", "text": found.text})


def confidence(state: State, run: Run) -> StageOutput:
    """How sure the answer is, from the run's signals (askchain.pipeline.confidence), with the other groups' results
    when it is low. When no candidate ran and the failures asked for columns named after words of the question that
    the schema lacks, the question gets "This data has no ..." instead (abstention after the fact)."""
    selection = state["selection"]
    executions = state.get("executions") or state.get("drafts", [])
    covered = state["coverage"]
    asked_missing = abstain.failed_on_missing(executions, covered)
    _, _, error = chosen_result(selection)
    if run.settings.pipeline.abstention != "none" and asked_missing and error:
        found = abstain.after_failure(state["question"], covered, asked_missing, run.schema)
        emit_abstention(found)
        return {"abstention": found}, {"abstention": found.record()}
    signals = run_signals(state, selection, executions, covered, asked_missing, error)
    judged = confidence_rules.assess(signals, run.settings.confidence)
    shown = confidence_rules.alternatives(selection, run.settings.confidence) if judged.level == "low" else []
    out = {"level": judged.level, "reasons": list(judged.reasons), "alternatives": shown}
    emit({"type": "confidence", **out})
    return {"confidence": out}, {**out, "signals": signals}


def run_signals(state: State, selection: Selection, executions: list[Execution], covered: Coverage,
                asked_missing: list[str], error: str | None) -> confidence_rules.Signals:
    chosen = selection.chosen
    group = confidence_rules.chosen_group(selection)
    return confidence_rules.Signals(
        samples=confidence_rules.sampled_votes(executions),
        votes=group.votes if group else (chosen.candidate.votes if chosen else 0),
        agreed_early=bool(state.get("agreed")) and not state.get("stood"),  # a lead that stood met no agreement
        revisions=chosen.candidate.round if chosen else 0,
        warnings=tuple(chosen.findings.warnings) if chosen else (),
        empty=bool(chosen and chosen.status == "empty"),
        error=error,
        coverage=covered.share,
        missing_terms=covered.missing,
        asked_missing=tuple(asked_missing),
    )
