"""`askchain eval selection`: would the LLM tournament pick better than the vote?

It replays the selection of every question in a pipeline results folder whose candidates disagreed: the groups of
equal results recorded in the trace are executed again, scored against the gold result, and then chosen from by
the vote and by the tournament of a judge model. A judge that follows positions instead of content shows it in
its share of "A" verdicts (the tournament alternates positions, so an unbiased judge says A about half the time).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from askchain.config import Settings
from askchain.errors import DatasetError
from askchain.eval.compare import COMPARATORS
from askchain.eval.datasets import reload_dataset
from askchain.eval.results import META_FILE, read_results
from askchain.eval.runner import gold_result
from askchain.generation.candidates import Candidate
from askchain.generation.context import Example as FewShot
from askchain.llm.base import ChatModel
from askchain.pipeline.run import Models, Run, try_execute
from askchain.pipeline.stages import build_context
from askchain.pipeline.revise import Execution
from askchain.pipeline.select import select_best
from askchain.rules.base import Findings


@dataclass
class SelectionAudit:
    questions: int = 0  # questions whose candidates disagreed (two or more result groups)
    some_right: int = 0  # ... of which some group was right: what any selector can reach
    vote_right: int = 0
    tournament_right: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)  # "A", "B", "none" -> count
    rows: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def audit_selection(out_dir: Path, model: ChatModel, settings: Settings, max_groups: int | None = None) -> SelectionAudit:
    meta_path = Path(out_dir) / META_FILE
    if not meta_path.is_file():
        raise DatasetError(f"{out_dir} holds no {META_FILE}: not an `askchain eval` results folder")
    meta = json.loads(meta_path.read_text())
    if meta.get("method") != "pipeline":
        raise DatasetError(f"{out_dir} holds a {meta.get('method')} run; the selection audit needs a pipeline run")
    dataset = reload_dataset(meta)
    compare = COMPARATORS[meta.get("comparator") or dataset.comparator]
    examples = {e.id: e for e in dataset.examples}
    traces = settings.paths.traces()
    max_groups = max_groups or settings.pipeline.selection_max_groups
    audit, engines = SelectionAudit(), {}
    for record in read_results(out_dir):
        trace_path = traces / f"{record.get('run_id')}.json"
        example = examples.get(record["id"])
        if example is None or record.get("gold_error") or not trace_path.is_file():
            continue
        stages = {s["stage"]: s for s in json.loads(trace_path.read_text())["stages"]}
        groups = stages.get("select", {}).get("groups", [])
        if len(groups) < 2:
            continue
        if example.db_id not in engines:
            engines[example.db_id] = dataset.connect(example.db_id, settings)
        engine = engines[example.db_id]
        gold = gold_result(engine, example)
        executions, right = [], []
        for group in groups:
            result, error = try_execute(engine, group["sql"])
            if error:  # the database changed since the run: this group cannot be replayed
                continue
            candidate = Candidate(group["sql"], ",".join(group.get("generators", [])), votes=group["votes"])
            executions.append(Execution(candidate, result, None, Findings(), "success"))
            right.append(compare(gold.columns, gold.rows, result.columns, result.rows, example.order_matters))
        if len(executions) < 2:
            continue
        run = Run(example.question, engine, Models.single(model), settings, hint=example.hint, db_id=example.db_id)
        shown = [FewShot(**e) for e in stages.get("examples", {}).get("examples", [])]
        ctx = build_context({"question": example.question, "examples": shown,
                             "linked": stages.get("schema_linking", {}).get("linked", {}),
                             "value_hints": stages.get("values", {}).get("value_hints", [])}, run)[0]["context"]
        vote = select_best(executions, ctx=ctx, model=model, method="vote")
        tournament = select_best(executions, ctx=ctx, model=model, method="tournament", max_groups=max_groups,
                                 majority_margin=0, seed=settings.llm.seed)
        by_sql = {ex.candidate.sql: ok for ex, ok in zip(executions, right)}
        row = {"id": example.id, "votes": [ex.candidate.votes for ex in executions], "right": right,
               "vote": by_sql[vote.chosen.candidate.sql], "tournament": by_sql[tournament.chosen.candidate.sql]}
        audit.rows.append(row)
        audit.questions += 1
        audit.some_right += any(right)
        audit.vote_right += row["vote"]
        audit.tournament_right += row["tournament"]
        for match in tournament.matches:
            verdict = match["winner"] or "none"
            audit.verdicts[verdict] = audit.verdicts.get(verdict, 0) + 1
    if not audit.questions:
        raise DatasetError(f"no question in {out_dir} has a trace with disagreeing candidates to replay")
    return audit


def render_audit(audit: SelectionAudit, model_id: str) -> str:
    matches = sum(audit.verdicts.values())
    share_a = audit.verdicts.get("A", 0) / matches if matches else 0.0
    return (
        f"| judge | questions with disagreeing candidates | some group right | vote right | tournament right | "
        f"verdicts A / B / none |\n|---|---:|---:|---:|---:|---|\n"
        f"| {model_id} | {audit.questions} | {audit.some_right} | {audit.vote_right} | {audit.tournament_right} | "
        f"{audit.verdicts.get('A', 0)} / {audit.verdicts.get('B', 0)} / {audit.verdicts.get('none', 0)} "
        f"({100 * share_a:.0f} % A) |\n"
    )
