"""Which runner answers a question, by the shape of its configuration.

A shape whose graph is a chain (no retrieval stage, no generator beside the draft, no planner: the baseline and
self-consistency) runs its stages in sequence here, in plain Python, following the graph's edges; any other shape
runs through the LangGraph graph (askchain.pipeline.graph). LangGraph is in the `pipeline` extra, so the methods
that need nothing in parallel run on the core install, and LangGraph is imported only for the methods that need it.
"""

from __future__ import annotations

from typing import Any, Callable

from askchain.pipeline import stages
from askchain.pipeline.events import Writer
from askchain.pipeline.run import Run
from askchain.pipeline.shape import ADDED, Shape, run_stage
from askchain.pipeline.stages import State, StageOutput


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
