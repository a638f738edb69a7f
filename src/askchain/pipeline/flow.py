"""Which runner answers a question, by the shape of its configuration.

A shape whose graph is a chain (no retrieval stage, no generator beside the draft, no planner: the baseline and
self-consistency) runs its stages in sequence here, in plain Python, following the graph's edges; any other shape
runs through the LangGraph graph (askchain.pipeline.graph). LangGraph is in the `pipeline` extra, so the methods
that need nothing in parallel run on the core install, and LangGraph is imported only for the methods that need it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from askchain.config import PipelineSettings
from askchain.llm.base import track_usage
from askchain.pipeline import stages
from askchain.pipeline.events import Writer, writing_to
from askchain.pipeline.run import Run
from askchain.pipeline.stages import State, StageOutput

#: Context retrieval's parallel stages and the settings that switch them on.
RETRIEVAL: dict[str, tuple[Callable[[State, Run], StageOutput], Callable[[PipelineSettings], bool]]] = {
    "examples": (stages.find_examples, lambda cfg: cfg.examples_k > 0),
    "schema_linking": (stages.link, lambda cfg: cfg.schema_linking != "never"),
    "values": (stages.find_values, lambda cfg: cfg.value_retrieval),
    "definitions": (stages.find_definitions, lambda cfg: cfg.semantic_layer),
}
#: State keys whose updates add to the value instead of replacing it (the graph's reducers).
ADDED = frozenset({"generated"})


@dataclass(frozen=True)
class Shape:
    """What decides a graph's nodes and edges; everything else in the settings is read by the stages at run time."""

    retrieval: tuple[str, ...]
    generators: tuple[str, ...]  # the enabled generators other than the draft's and the lead
    answer: bool
    answerable: bool  # whether a question is checked for data the schema lacks before SQL is written
    planner: bool  # whether a question may be split into steps, each answered by the graph without a planner

    @classmethod
    def of(cls, cfg: PipelineSettings) -> "Shape":
        others = tuple(name for name in stages.enabled_generators(cfg)
                       if name not in (cfg.draft_generator, cfg.lead_generator))
        return cls(tuple(name for name, (_, on) in RETRIEVAL.items() if on(cfg)), others, cfg.answer,
                   cfg.abstention != "none", cfg.planner != "never")

    @property
    def chain(self) -> bool:
        """Whether the graph runs one stage at a time: nothing in parallel and no plan of steps."""
        return not (self.retrieval or self.generators or self.planner)


def run_stage(name: str, fn: Callable[[State, Run], StageOutput], state: State, run: Run, write: Writer) -> dict[str, Any]:
    """One stage as a node runs it: start/end events, seconds and tokens in the trace; its own events go to `write`.
    Returns its state update."""
    write({"type": "stage", "stage": name, "status": "start"})
    started = time.perf_counter()
    record: dict[str, Any] = {}
    try:
        with track_usage() as usage, writing_to(write):
            update, record = fn(state, run)
    finally:
        seconds = time.perf_counter() - started
        if run.trace is not None:
            run.trace.record(name, seconds, usage.as_dict(), **record)
        write({"type": "stage", "stage": name, "status": "end", "seconds": round(seconds, 3)})
    return update


def run_pipeline(run: Run, on_event: Callable[[dict[str, Any]], None] | None = None) -> State:
    """Answer the run's question; its events go to `on_event` as they happen. Returns the final state."""
    shape = Shape.of(run.settings.pipeline)
    if not shape.chain:
        from askchain.pipeline.graph import run_graph

        return run_graph(run, on_event)
    return run_chain(run, shape, on_event or (lambda event: None))


def run_chain(run: Run, shape: Shape, write: Writer) -> State:
    """A chain-shaped graph's edges in plain Python, with the state the graph would hold: [rewrite] ->
    build_context -> [answerable, leaving on an abstention] -> draft -> revise unless the draft agreed -> select ->
    confidence -> [answer unless abstaining]."""
    keys = State.__annotations__.keys()
    state: State = {"question": run.question, "follow_up": bool(run.history), "generated": []}

    def step(name: str, fn: Callable[[State, Run], StageOutput]) -> None:
        update = run_stage(name, fn, dict(state), run, write)
        for key, value in update.items():
            if key in keys:
                state[key] = state.get(key, []) + value if key in ADDED else value

    if state["follow_up"]:
        step("rewrite", stages.rewrite)
    step("build_context", stages.build_context)
    if shape.answerable:
        step("answerable", stages.answerable)
        if state.get("abstention"):
            return state
    step("draft", stages.draft)
    if not state.get("agreed"):
        step("revise", stages.revise)
    step("select", stages.select)
    step("confidence", stages.confidence)
    if shape.answer and not state.get("abstention"):
        step("answer", stages.answer)
    return state
