"""What decides a pipeline's shape (its retrieval stages, generators, planner) and how one stage runs as a node:
shared by the plain chain (askchain.pipeline.flow) and the LangGraph graph (askchain.pipeline.graph), which import
it and not each other."""

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
