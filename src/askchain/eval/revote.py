"""`askchain eval revote`: how a lead generator's answers would have fared under other votes, without a model.

A pipeline run that drew every draft sample beside the lead (`pipeline.lead_confirmation` = the draft's n) records
each distinct candidate's generator, votes, round, result key and verdict. From that, the answer of any lead policy
can be recounted offline: the lead alone, the lead confirmed by the first k draft samples (expected over the
samples' order, since they are drawn independently) and otherwise the whole vote with the lead weighing w, or the
lead standing unless c of those k samples agree on another result. A doubted lead (one recorded with a single vote
where the run's weight was larger) follows its own policy. The cost of a policy is the draft samples it draws, on
average.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
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
    with it weighing `weight`; with `challenge`, an unconfirmed lead is put to that vote only when `challenge` of the
    `confirm` samples agree on another result, and otherwise stands (`pipeline.lead_challenge`)."""

    confirm: int | None
    weight: int
    challenge: int = 0

    def label(self) -> str:
        if self.confirm is None:
            return f"every sample drawn, vote at weight {self.weight}"
        if self.confirm == 0:
            return "alone"
        put = f"{self.challenge} agree on another result" if self.challenge else "unconfirmed"
        return f"confirm {self.confirm}, vote at weight {self.weight} when {put}"


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


def standing_chance(draft: list[dict], lead: dict, policy: LeadPolicy, samples: int) -> float:
    """The chance that the lead stands without the whole vote: one of the policy's first draft samples returns its
    result, or (with `challenge`) fewer than `challenge` of them agree on another. Expected over the order of the
    `samples` drawn independently, each distinct candidate counting its votes, the failed ones filling the rest."""
    if policy.confirm is None:
        return 0.0
    if policy.confirm == 0:
        return 1.0
    slots = [c["result"] for c in draft for _ in range(c.get("votes", 1))][:samples]
    slots += [None] * (samples - len(slots))
    drawn = list(combinations(slots, min(policy.confirm, samples)))
    return sum(stands(first, lead["result"], policy.challenge) for first in drawn) / len(drawn)


def stands(first: tuple, lead_result: str, challenge: int) -> bool:
    """Whether the lead stands after the first wave of draft samples returned `first` (None: no rows or failed)."""
    if lead_result in first:
        return True
    agreeing = Counter(result for result in first if result is not None)
    return bool(challenge) and max(agreeing.values(), default=0) < challenge


def recount(records: list[dict[str, Any]], policy: LeadPolicy, doubted_policy: LeadPolicy, lead_weight: int,
            lead_generator: str, draft_generator: str, samples: int) -> Outcome:
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
        draft = [c for c in rest if c.get("round", 0) == 0 and c["generator"] == draft_generator]
        chance = standing_chance(draft, lead, chosen, samples)
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
    draft_generator = settings["draft_generator"]
    samples = int(settings["generators"][draft_generator]["n"])
    if int(settings.get("lead_confirmation", 0)) < samples:
        raise DatasetError(f"{out_dir} drew fewer than its {samples} draft samples beside the lead "
                           f"(lead_confirmation {settings.get('lead_confirmation')}): there is no whole draft to recount")
    records = [r for r in read_results(out_dir) if r.get("correct") is not None]
    doubted = LeadPolicy(confirm=2, weight=1)
    lines = [f"{len(records)} questions of {out_dir} ({lead_generator} leading at weight {lead_weight}, {samples} "
             f"draft samples); a doubted lead: {doubted.label()}", "",
             "| the lead's policy | right (expected) | draft samples drawn (mean) |", "|---|---:|---:|"]
    policies = [LeadPolicy(0, lead_weight)] + [LeadPolicy(k, w) for k in (1, 2, 3, None) for w in (1, 2, 3)]
    # challenged leads at each weight the setting allows (lead_challenge - 1 <= the lead's weight)
    policies += [LeadPolicy(k, w, c) for w in (1, 2) for k, c in ((2, 2), (3, 2), (3, 3)) if c - 1 <= w]
    for policy in policies:
        outcome = recount(records, policy, doubted, lead_weight, lead_generator, draft_generator, samples)
        lines.append(f"| {policy.label()} | {outcome.right:.1f} | {outcome.samples / max(outcome.questions, 1):.1f} |")
    return "\n".join(lines)
