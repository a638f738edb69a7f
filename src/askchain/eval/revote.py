"""`askchain eval revote`: how a lead generator's answers would have fared under other votes, without a model.

A pipeline run that drew every draft sample beside the lead (`pipeline.lead_confirmation` = the draft's n) records
each distinct candidate's generator, votes, round, result key and verdict. From that, the answer of any lead policy
can be recounted offline: the lead alone, the lead confirmed by the first k draft samples (expected over the
samples' order, since they are drawn independently) and otherwise the whole vote with the lead weighing w. A doubted
lead (one recorded with a single vote where the run's weight was larger) follows its own policy. The cost of a
policy is the draft samples it draws, on average.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Any

from askchain.errors import DatasetError
from askchain.eval.results import read_meta, read_results
from askchain.eval.runner import result_key

#: The result key of a query that ran to no rows.
EMPTY_RESULT = result_key((), "SELECT 1", "bigquery")


@dataclass(frozen=True)
class LeadPolicy:
    """Confirm the lead with `confirm` draft samples (0: it answers alone; None: never, it always votes), else vote
    with it weighing `weight`."""

    confirm: int | None
    weight: int

    def label(self) -> str:
        if self.confirm is None:
            return f"every sample drawn, vote at weight {self.weight}"
        return "alone" if self.confirm == 0 else f"confirm {self.confirm}, else vote at weight {self.weight}"


@dataclass
class Outcome:
    right: float = 0.0  # expected right answers
    samples: float = 0.0  # expected draft samples drawn
    questions: int = 0


def lead_and_rest(record: dict[str, Any], lead_generator: str) -> tuple[dict | None, list[dict]]:
    """The record's first lead candidate that ran to rows, and every other candidate that did."""
    ran = [c for c in record.get("candidates", []) if c.get("result") not in (None, EMPTY_RESULT)]
    leads = [c for c in ran if c["generator"] == lead_generator and c.get("round", 0) == 0]
    return (leads[0] if leads else None), [c for c in ran if c["generator"] != lead_generator]


def vote_right(candidates: list[dict], lead: dict | None, weight: int) -> float:
    """The share of right answers the vote gives: most votes wins, the lead's result first at a tie (it is drawn
    first), other ties shared."""
    votes: dict[str, int] = {}
    right: dict[str, bool] = {}
    for c in ([lead] if lead else []) + candidates:
        votes[c["result"]] = votes.get(c["result"], 0) + (weight if c is lead else c.get("votes", 1))
        right[c["result"]] = c["right"]
    if not votes:
        return 0.0
    top = max(votes.values())
    tied = [key for key, n in votes.items() if n == top]
    if lead and lead["result"] in tied:
        return float(right[lead["result"]])
    return sum(right[key] for key in tied) / len(tied)


def confirmed_chance(draft: list[dict], lead: dict, confirm: int | None, samples: int) -> float:
    """The chance that one of `confirm` draft samples, of `samples` drawn independently, returns the lead's result."""
    if confirm is None:
        return 0.0
    if confirm == 0:
        return 1.0
    agreeing = min(samples, sum(c.get("votes", 1) for c in draft if c["result"] == lead["result"]))
    confirm = min(confirm, samples)
    return 1.0 - comb(samples - agreeing, confirm) / comb(samples, confirm)


def recount(records: list[dict[str, Any]], policy: LeadPolicy, doubted_policy: LeadPolicy, lead_weight: int,
            lead_generator: str, samples: int) -> Outcome:
    """The expected right answers and draft samples of `policy` (`doubted_policy` for a lead recorded with one vote
    where the run's weight was `lead_weight`) over a run that drew all `samples` draft samples beside the lead."""
    outcome = Outcome(questions=len(records))
    for record in records:
        lead, rest = lead_and_rest(record, lead_generator)
        if lead is None:
            outcome.right += vote_right(rest, None, 1)
            outcome.samples += samples
            continue
        chosen = doubted_policy if lead.get("votes", 1) < lead_weight else policy
        draft = [c for c in rest if c.get("round", 0) == 0]
        chance = confirmed_chance(draft, lead, chosen.confirm, samples)
        outcome.right += chance * lead["right"] + (1 - chance) * vote_right(rest, lead, chosen.weight)
        outcome.samples += chance * min(chosen.confirm or 0, samples) + (1 - chance) * samples
    return outcome


def revote_table(out_dir: Path) -> str:
    """Markdown: each lead policy's expected right answers and draft samples, the doubted lead confirmed by 2. The
    lead generator, its weight and the draft's samples are the run's own (run.json)."""
    settings = read_meta(out_dir).get("pipeline_settings") or {}
    lead_generator = settings.get("lead_generator")
    if not lead_generator:
        raise DatasetError(f"{out_dir} ran without a lead generator: there is no lead to recount")
    lead_weight = int(settings["generators"][lead_generator]["options"].get("weight", 1))
    samples = int(settings["generators"][settings["draft_generator"]]["n"])
    records = [r for r in read_results(out_dir) if r.get("correct") is not None]
    doubted = LeadPolicy(confirm=2, weight=1)
    lines = [f"{len(records)} questions of {out_dir} ({lead_generator} leading at weight {lead_weight}, {samples} "
             f"draft samples); a doubted lead: {doubted.label()}", "",
             "| the lead's policy | right (expected) | draft samples drawn (mean) |", "|---|---:|---:|"]
    policies = [LeadPolicy(0, lead_weight)] + [LeadPolicy(k, w) for k in (1, 2, 3, None) for w in (1, 2, 3)]
    for policy in policies:
        outcome = recount(records, policy, doubted, lead_weight, lead_generator, samples)
        lines.append(f"| {policy.label()} | {outcome.right:.1f} | {outcome.samples / max(outcome.questions, 1):.1f} |")
    return "\n".join(lines)
