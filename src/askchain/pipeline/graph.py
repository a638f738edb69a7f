"""The full method as a LangGraph graph: retrieve_context (examples, schema linking, values in parallel) ->
generate_sql (the generators in parallel) -> revise -> select -> answer. Every node calls a plain stage
function; the graph only wires them, streams an event per stage and records the trace."""

from __future__ import annotations

import operator
from dataclasses import replace
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph

from askchain.config import PipelineSettings
from askchain.db.schema import Schema
from askchain.generation.candidates import GENERATORS, Candidate, GeneratorConfig, dedupe
from askchain.generation.context import Example, GenerationContext
from askchain.generation.sql_text import normalize_sql
from askchain.pipeline.answer_stage import answer_result
from askchain.pipeline.baseline import plain_context
from askchain.pipeline.context import Task, stage, try_execute
from askchain.pipeline.methods import Outcome
from askchain.pipeline.revise import Execution, execute_candidates, revision_loop
from askchain.pipeline.select import Selection, group_by_result, select_best
from askchain.pipeline.validate import validate_sql
from askchain.retrieval.schema import estimate_tokens, link_schema


class GenerationState(TypedDict, total=False):
    """The generate_sql subgraph's state: it must not carry the draft's candidates, or returning them to the
    parent would add them to its list a second time."""

    context: GenerationContext
    generated: Annotated[list[Candidate], operator.add]


class State(TypedDict, total=False):
    examples: list[Example]
    linked: dict[str, list[str]]
    value_hints: list[str]
    context: GenerationContext
    candidates: list[Candidate]  # the draft's samples
    generated: Annotated[list[Candidate], operator.add]  # the other generators' candidates
    drafts: list[Execution]
    agreed: bool
    executions: list[Execution]
    selection: Selection
    answer: dict[str, Any]


# ---- stage functions: plain functions of their inputs -------------------------------------------------------------

def find_examples(task: Task, cfg: PipelineSettings) -> list[Example]:
    if cfg.examples_k <= 0:
        return []
    from askchain.retrieval.examples import retrieve_examples

    schema = task.engine.schema()
    skeleton_model = task.model if cfg.skeleton == "llm" else None
    found = retrieve_examples(
        task.question, cfg.examples_k, exclude_db=task.db_id, exclude_question=task.question,
        only_db=schema.db_id if cfg.examples_scope == "schema" else None,
        schema=schema, model=skeleton_model, settings=task.settings,
    )
    return [Example(e.question, e.sql, e.db_id) for e in found]


def link(task: Task, cfg: PipelineSettings) -> dict[str, list[str]]:
    """Tables and columns relevant to the question; empty means the whole schema is kept."""
    schema = task.engine.schema()
    if cfg.schema_linking == "never" or (
        cfg.schema_linking == "auto" and estimate_tokens(schema.ddl()) <= cfg.linking_token_budget
    ):
        return {}
    return link_schema(task.question, schema, task.model, hint=task.hint).columns


def find_values(task: Task, cfg: PipelineSettings) -> list[str]:
    if not cfg.value_retrieval:
        return []
    from askchain.retrieval.values import retrieve_values

    return retrieve_values(
        task.question, task.engine, model=task.model if cfg.keywords == "llm" else None, hint=task.hint, settings=task.settings
    )


def build_context(task: Task, linked: dict[str, list[str]], value_hints: list[str], examples: list[Example]) -> GenerationContext:
    """The baseline's context, narrowed to the linked schema and enriched with value hints and examples."""
    shown = task.engine.schema().subset(linked).ddl() if linked else task.schema_text()
    return replace(plain_context(task), schema_text=shown, value_hints=value_hints, examples=examples)


# ---- the graph ----------------------------------------------------------------------------------------------------

def build_graph(task: Task):
    cfg = task.settings.pipeline
    seed = task.settings.llm.seed
    schema = task.engine.schema()

    def execute(sql: str):
        return try_execute(task.engine, sql)

    def node(name: str, fn: Callable[[State], tuple[dict, dict]]):
        def run(state: State) -> dict:
            with stage(task, name) as record:
                update, outputs = fn(state)
                record.update(outputs)
            return update
        return run

    # retrieve_context subgraph
    ctx_graph = StateGraph(State)
    ctx_graph.add_node("examples", node("examples", lambda s: _out("examples", find_examples(task, cfg))))
    ctx_graph.add_node("schema_linking", node("schema_linking", lambda s: _out("linked", link(task, cfg))))
    ctx_graph.add_node("values", node("values", lambda s: _out("value_hints", find_values(task, cfg))))
    ctx_graph.add_node("build_context", node("build_context", lambda s: _context(task, s)))
    for parallel in ("examples", "schema_linking", "values"):
        ctx_graph.add_edge(START, parallel)
        ctx_graph.add_edge(parallel, "build_context")
    ctx_graph.add_edge("build_context", END)

    enabled = [(name, gcfg) for name, gcfg in cfg.generators.items() if gcfg.enabled and gcfg.n > 0 and name in GENERATORS]

    def generator(name: str, gcfg, offset: int):
        gen_cfg = GeneratorConfig(gcfg.n, gcfg.temperature, gcfg.top_p, gcfg.max_tokens, True, dict(gcfg.options))

        def generate(state: State) -> list[Candidate]:
            made = GENERATORS[name](state["context"], task.model, gen_cfg, seed + 1000 * offset, execute)
            task.emit({"type": "candidates", "generator": name, "sql": [c.sql for c in made]})
            return made
        return generate

    # draft: the cheapest generator first; when enough of its samples already agree on one result, the other
    # generators would only confirm it, so the graph goes straight to selection (adaptive test-time compute)
    drafting = [(name, gcfg) for name, gcfg in enabled if name == cfg.draft_generator]
    draft_sampler = generator(*drafting[0], 0) if drafting else None

    def draft(state: State):
        made = draft_sampler(state) if draft_sampler else []
        unique = dedupe(made, task.dialect)
        executions = execute_candidates(unique, lambda sql: validate_sql(sql, schema), execute)
        agreed = draft_agrees(executions, cfg.agreement_exit, task.dialect)
        return ({"candidates": made, "drafts": executions, "agreed": agreed},
                {"candidates": [c.sql for c in made], "agreed": agreed,
                 "executions": [ex.record() for ex in executions]})

    # generate_sql subgraph: the other generators in parallel, all from the same context
    others = [(i, name, gcfg) for i, (name, gcfg) in enumerate(enabled, start=1) if name != cfg.draft_generator]
    gen_graph = StateGraph(GenerationState)
    for i, name, gcfg in others:
        sample = generator(name, gcfg, i)

        def generate(state: State, sample=sample):
            made = sample(state)
            return {"generated": made}, {"candidates": [c.sql for c in made], "reasoning": [c.reasoning for c in made]}

        gen_graph.add_node(name, node(name, generate))
        gen_graph.add_edge(START, name)
        gen_graph.add_edge(name, END)

    def revise(state: State):
        unique = dedupe(state.get("candidates", []) + state.get("generated", []), task.dialect)
        rounds = []

        def on_round(round_no: int, results: list[Execution]):
            rounds.append([ex.record() for ex in results])
            task.emit({"type": "revision", "round": round_no, "executions": rounds[-1]})

        executions = revision_loop(
            unique, ctx=state["context"], model=task.model, key=lambda sql: normalize_sql(sql, task.dialect),
            validate=lambda sql: validate_sql(sql, schema), execute=execute,
            rounds=cfg.revision_rounds, max_revisions=cfg.max_revisions, empty_answer_share=cfg.empty_answer_share,
            seed=seed, on_round=on_round,
            known=state.get("drafts", []),
        )
        return {"executions": executions}, {"unique_candidates": len(unique), "rounds": rounds}

    def select(state: State):
        selection = select_best(
            state.get("executions") or state.get("drafts", []), ctx=state["context"], model=task.model,
            method=cfg.selection, max_groups=cfg.selection_max_groups, majority_margin=cfg.majority_margin,
            empty_answer_share=cfg.empty_answer_share, seed=seed,
        )
        chosen = selection.chosen
        task.emit({"type": "selected", "sql": chosen.candidate.sql if chosen else None, "reason": selection.reason})
        record = {
            "reason": selection.reason,
            "groups": [{"size": len(g.members), "votes": g.votes, "score": g.score, "generators": g.generators, "sql": g.representative.candidate.sql} for g in selection.groups],
            "matches": selection.matches,
            "chosen": chosen.candidate.sql if chosen else None,
        }
        return {"selection": selection}, record

    def answer(state: State):
        chosen = state["selection"].chosen
        if not cfg.answer or chosen is None:
            return {}, {"skipped": True}
        found = chosen.result
        out = answer_result(
            task.question, chosen.candidate.sql, found.columns if found else [], found.rows if found else [],
            truncated=bool(found and found.truncated), error=chosen.error, model=task.model,
        )
        task.emit({"type": "answer", **out})
        return {"answer": out}, out

    graph = StateGraph(State)
    graph.add_node("retrieve_context", ctx_graph.compile())
    graph.add_node("draft", node("draft", draft))
    if others:
        graph.add_node("generate_sql", gen_graph.compile())
    graph.add_node("revise", node("revise", revise))
    graph.add_node("select", node("select", select))
    graph.add_node("answer", node("answer", answer))
    graph.add_edge(START, "retrieve_context")
    graph.add_edge("retrieve_context", "draft")
    # without other generators enabled, a disagreeing draft goes straight to revision
    widen = "generate_sql" if others else "revise"
    graph.add_conditional_edges("draft", lambda s: "select" if s.get("agreed") else widen, [widen, "select"])
    if others:
        graph.add_edge("generate_sql", "revise")
    graph.add_edge("revise", "select")
    graph.add_edge("select", "answer")
    graph.add_edge("answer", END)
    return graph.compile()


def draft_agrees(executions: list[Execution], needed: int, dialect: str) -> bool:
    """Whether at least `needed` draft samples ran to one same non-empty result (0 = never stop early)."""
    groups = group_by_result(executions, dialect)
    return needed > 0 and bool(groups) and groups[0].votes >= needed


def _out(key: str, value) -> tuple[dict, dict]:
    return {key: value}, {key: value}


def _context(task: Task, state: State) -> tuple[dict, dict]:
    ctx = build_context(task, state.get("linked", {}), state.get("value_hints", []), state.get("examples", []))
    return {"context": ctx}, {"schema_tokens": estimate_tokens(ctx.schema_text), "linked": state.get("linked", {})}


def run_pipeline(task: Task) -> Outcome:
    """The `pipeline` method: the graph run to completion."""
    final = build_graph(task).invoke({})
    selection: Selection = final["selection"]
    chosen = selection.chosen
    candidates = [ex.record() for ex in final.get("executions") or final.get("drafts", [])]
    if chosen is None:
        return Outcome(None, None, "no candidate SQL was produced", candidates)
    error = None if chosen.status == "success" else (chosen.error or ("no rows" if chosen.status == "empty" else chosen.status))
    if chosen.status == "empty":
        error = None  # ran fine: no rows is the answer when most samples agree on it or revision found none
    return Outcome(chosen.candidate.sql, chosen.result, error, candidates, final.get("answer"))


def drawable_graph(settings):
    """The compiled graph's structure (nodes and edges, subgraphs expanded), for pictures in docs/: every
    generator is drawn, including those the configuration switches off."""
    from askchain.llm.fake import ScriptedModel

    settings = settings.with_overrides(pipeline={"generators": {name: {"enabled": True} for name in GENERATORS}})

    class _NoEngine:
        name = "drawing"
        query_dialect = "sqlite"

        def schema(self):
            return Schema([], "sqlite")

    return build_graph(Task("", _NoEngine(), ScriptedModel([]), settings)).get_graph(xray=True)


def graph_dot(graph) -> str:
    """Graphviz DOT text for the graph, subgraphs as clusters."""
    clusters: dict[str, list[str]] = {}
    for node_id in graph.nodes:
        if ":" in node_id:
            clusters.setdefault(node_id.split(":")[0], []).append(node_id)

    def label(node_id: str) -> str:
        name = node_id.split(":")[-1]
        return {"__start__": "start", "__end__": "end"}.get(name, name)

    lines = ["digraph pipeline {", '  rankdir=TB; node [shape=box, style="rounded,filled", fillcolor="#eef2ff", fontname="Helvetica"];']
    for name, members in clusters.items():
        lines.append(f'  subgraph "cluster_{name}" {{ label="{name}"; style="rounded"; color="#94a3b8";')
        lines += [f'    "{m}" [label="{label(m)}"{", shape=ellipse, fillcolor=white" if label(m) in ("start", "end") else ""}];' for m in members]
        lines.append("  }")
    for node_id in graph.nodes:
        if ":" not in node_id:
            shape = ', shape=ellipse, fillcolor=white' if label(node_id) in ("start", "end") else ""
            lines.append(f'  "{node_id}" [label="{label(node_id)}"{shape}];')
    lines += [f'  "{e.source}" -> "{e.target}"{" [style=dashed]" if e.conditional else ""};' for e in graph.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"
