"""The stages wired as a LangGraph graph: [rewrite] -> [plan] -> retrieve_context (examples, schema linking, values
in parallel) -> [answerable] -> draft -> [generate_sql: the other generators in parallel] -> revise -> select ->
confidence -> [answer]. A question the data cannot answer leaves after `answerable` or `confidence` with no SQL; a
question planned in several steps goes to `steps`, which answers each step with the graph of one query, then to
[answer].

A graph is compiled once per configuration shape (which stages and generators run) and reused for every question:
the question's run travels as the graph's runtime context, events leave through LangGraph's custom stream, and
each node times its stage, meters its tokens and records it in the trace. A configuration whose graph is a chain of
stages runs without LangGraph (askchain.pipeline.flow), so this module and LangGraph load only for the others."""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Callable

from askchain.config import PipelineSettings
from askchain.errors import require
from askchain.pipeline import stages
from askchain.pipeline.shape import RETRIEVAL, Shape, run_stage
from askchain.pipeline.run import Run
from askchain.pipeline.stages import State, StageOutput

require("langgraph", "pipeline")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402


def staged(name: str, fn: Callable[[State, Run], StageOutput]):
    """A graph node running one stage (`run_stage`): start/end events, seconds and tokens in the trace."""

    def node(state: State, runtime: Runtime[Run]) -> dict[str, Any]:
        return run_stage(name, fn, state, runtime.context, runtime.stream_writer)

    return node


@lru_cache(maxsize=16)
def compiled_graph(shape: Shape):
    """The graph for one configuration shape, compiled on first use."""
    context = StateGraph(State, context_schema=Run)
    for name in shape.retrieval:
        context.add_node(name, staged(name, RETRIEVAL[name][0]))
        context.add_edge(START, name)
        context.add_edge(name, "build_context")
    context.add_node("build_context", staged("build_context", stages.build_context))
    if not shape.retrieval:
        context.add_edge(START, "build_context")
    context.add_edge("build_context", END)

    graph = StateGraph(State, context_schema=Run)
    graph.add_node("rewrite", staged("rewrite", stages.rewrite))
    graph.add_node("retrieve_context", context.compile())
    graph.add_node("draft", staged("draft", stages.draft))
    graph.add_node("revise", staged("revise", stages.revise))
    graph.add_node("select", staged("select", stages.select))
    # the question as the pipeline answers it: a follow-up rewritten, then planned into steps when it needs several
    first = "retrieve_context"
    if shape.planner:
        graph.add_node("plan", staged("plan", stages.plan))
        graph.add_node("steps", staged("steps", partial(stages.run_steps, answer_one=run_graph)))
        graph.add_conditional_edges("plan", lambda s: "steps" if len(s["plan"]) > 1 else "retrieve_context",
                                    ["steps", "retrieve_context"])
        first = "plan"
    graph.add_conditional_edges(START, lambda s: "rewrite" if s.get("follow_up") else first, ["rewrite", first])
    graph.add_edge("rewrite", first)
    if shape.answerable:  # a question the data cannot answer ends here, answered "This data has no ..."
        graph.add_node("answerable", staged("answerable", stages.answerable))
        graph.add_edge("retrieve_context", "answerable")
        graph.add_conditional_edges("answerable", lambda s: END if s.get("abstention") else "draft", ["draft", END])
    else:
        graph.add_edge("retrieve_context", "draft")
    # without other generators, a draft whose samples disagree goes straight to revision
    widen = "revise"
    if shape.generators:
        generation = StateGraph(State, context_schema=Run)
        for name in shape.generators:
            generation.add_node(name, staged(name, partial(stages.generate, name)))
            generation.add_edge(START, name)
            generation.add_edge(name, END)
        graph.add_node("generate_sql", generation.compile())
        graph.add_edge("generate_sql", "revise")
        widen = "generate_sql"
    graph.add_conditional_edges("draft", lambda s: "select" if s.get("agreed") else widen, [widen, "select"])
    graph.add_edge("revise", "select")
    graph.add_node("confidence", staged("confidence", stages.confidence))
    graph.add_edge("select", "confidence")
    answered = ["confidence", "steps"] if shape.planner else ["confidence"]
    for node in answered:
        if shape.answer:
            graph.add_conditional_edges(node, lambda s: END if s.get("abstention") else "answer", ["answer", END])
        else:
            graph.add_edge(node, END)
    if shape.answer:
        graph.add_node("answer", staged("answer", stages.answer))
        graph.add_edge("answer", END)
    return graph.compile()


def run_graph(run: Run, on_event: Callable[[dict[str, Any]], None] | None = None) -> State:
    """Answer the run's question; its events go to `on_event` as they happen. Returns the final state."""
    graph = compiled_graph(Shape.of(run.settings.pipeline))
    final: State = {}
    depth = None  # the graph's own namespace depth: deeper under a step of a plan, which runs this graph in a node
    start: State = {"question": run.question, "follow_up": bool(run.history)}
    for namespace, mode, chunk in graph.stream(start, context=run, stream_mode=["custom", "values"], subgraphs=True):
        if mode == "custom":
            if on_event is not None:
                on_event(chunk)
        elif depth is None or len(namespace) <= depth:  # the graph's state, not a subgraph's
            depth, final = len(namespace), chunk
    return final


def drawable_graph(cfg: PipelineSettings):
    """The graph's structure (subgraphs expanded) for pictures in docs/: every generator and stage is drawn,
    including those the configuration switches off."""
    every = cfg.model_copy(update={"generators": {name: g.model_copy(update={"enabled": True})
                                                  for name, g in cfg.generators.items()}})
    full = Shape(tuple(RETRIEVAL), Shape.of(every).generators, True, True, True)
    return compiled_graph(full).get_graph(xray=True)


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
