"""What a check or repair adds, measured by switching it off (`pipeline.rules_off`).

A run's traces record, for each execution, the ids of the rules that acted on its candidate: the repairs that
changed it and the checks that found something (askchain.pipeline.revise.Execution.rules). A question on which no
switched-off rule acted is answered the same without it, the pipeline being deterministic for a seed, so an ablation
asks again only the questions the rules acted on and copies the others from the run it is measured against
(`askchain eval eth --reuse BASE --off RULE`). A rule whose data the prompts show (the shorthands) changes every
question: then every question is asked again. `askchain eval rules BASE` lists where each rule acted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from askchain.errors import DatasetError
from askchain.eval.results import read_meta, read_results
from askchain.rules.registry import rules_by_id


def trace_rules(trace: Any) -> Iterator[list[str] | None]:
    """The rule ids of every execution a trace holds (None for an execution recorded before ids were)."""
    if isinstance(trace, dict):
        if "sql" in trace and "status" in trace:
            yield trace.get("rules")
        for value in trace.values():
            yield from trace_rules(value)
    elif isinstance(trace, list):
        for value in trace:
            yield from trace_rules(value)


def acted_on(records: list[dict[str, Any]], traces_dir: Path) -> dict[str, set[str]]:
    """Per question id, the ids of the rules that acted on any of its candidates. Raises DatasetError when a trace is
    missing or predates the ids: such a run cannot tell where a rule acted."""
    acted: dict[str, set[str]] = {}
    for record in records:
        path = traces_dir / f"{record.get('run_id')}.json"
        if not record.get("run_id") or not path.is_file():
            raise DatasetError(f"no trace of {record['id']} in {traces_dir}: ablation needs the run's traces")
        found = list(trace_rules(json.loads(path.read_text(encoding="utf-8"))))
        if any(ids is None for ids in found):
            raise DatasetError(f"the trace of {record['id']} does not record which rules acted (a run before they "
                               "were recorded): run it again")
        acted[record["id"]] = {rule for ids in found for rule in ids}
    return acted


def questions_to_ask(base: Path, traces_dir: Path, off: Iterable[str]) -> set[str]:
    """The questions of `base` that switching `off` these rules may change (those the base run had on)."""
    base_off = set(read_meta(base).get("pipeline_settings", {}).get("rules_off") or ())
    if not base_off <= set(off):
        raise DatasetError(f"{base} ran with {', '.join(sorted(base_off - set(off)))} off: its answers are no "
                           "baseline for a run with them on")
    switched = set(off) - base_off
    known = rules_by_id()
    records = read_results(base)
    if any(known[rule].shapes_prompts for rule in switched):
        return {record["id"] for record in records}
    return {qid for qid, rules in acted_on(records, traces_dir).items() if rules & switched}


def rules_table(base: Path, traces_dir: Path, comparator: str) -> str:
    """Markdown: each rule that acted in the run, the questions it acted on, and how many of them were right."""
    records = {r["id"]: r for r in read_results(base) if r.get("correct") is not None}
    acted = acted_on(list(records.values()), traces_dir)
    by_rule: dict[str, list[str]] = {}
    for qid, rules in acted.items():
        for rule in rules:
            by_rule.setdefault(rule, []).append(qid)
    known = rules_by_id()
    lines = [f"{len(records)} questions of {base}; rules that acted on no candidate: "
             + (", ".join(sorted(set(known) - set(by_rule))) or "none"), "",
             "| rule | kind | questions acted on | right of them | questions |", "|---|---|---:|---:|---|"]
    for rule, ids in sorted(by_rule.items(), key=lambda item: (-len(item[1]), item[0])):
        right = sum(bool(records[qid]["correct"].get(comparator)) for qid in ids)
        kind = known[rule].kind if rule in known else "?"
        lines.append(f"| {rule} | {kind} | {len(ids)} | {right} | {' '.join(sorted(ids))} |")
    return "\n".join(lines)
