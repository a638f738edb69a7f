"""Confidence: every answer's level (high / medium / low) and the reasons for it, from the signals its run left.

The rules (RULES below; thresholds in settings `confidence:`):

- the chosen result's share of all samples' votes sets the start: high (>= high_vote_share), medium
  (>= medium_vote_share) or low; a single sample starts at medium, since it has nothing to agree with;
- the draft's samples agreed at once (the other generators were skipped): one level up;
- the chosen SQL needed revision: one level down;
- validation warned about the chosen SQL: one level down;
- the result is empty: one level down;
- the schema names less than min_coverage of the question's content terms: one level down;
- queries asked for columns the schema lacks, named after words of the question: one level down;
- the chosen SQL failed, or there is none: low, whatever else.

The moves add up and the sum is kept between low and high. A low answer shows the results the other candidate groups
produced (`alternatives`), since one of them may be the right one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from askchain.config import ConfidenceSettings
from askchain.pipeline.revise import Execution
from askchain.pipeline.select import Group, Selection

LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class Signals:
    """What a run says about its answer."""

    samples: int  # the votes of every sampled candidate
    votes: int  # the votes behind the chosen result
    agreed_early: bool = False
    revisions: int = 0  # the revision round that produced the chosen SQL (0: as sampled)
    warnings: tuple[str, ...] = ()
    empty: bool = False
    error: str | None = None
    coverage: float | None = None  # share of the question's content terms the schema names (None: it has none)
    missing_terms: tuple[str, ...] = ()
    asked_missing: tuple[str, ...] = ()  # names queries asked for that the schema lacks and the question uses

    @property
    def vote_share(self) -> float:
        return min(1.0, self.votes / self.samples) if self.samples else 0.0


@dataclass(frozen=True)
class Rule:
    """One row of the rules table: when it applies, how many levels it moves the answer, and why, in words."""

    applies: Callable[[Signals, ConfidenceSettings], bool]
    moves: int
    reason: Callable[[Signals], str]


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


RULES: tuple[Rule, ...] = (
    Rule(lambda s, cfg: s.agreed_early, +1, lambda s: "the draft's samples agreed at once"),
    Rule(lambda s, cfg: s.revisions > 0, -1, lambda s: f"the SQL needed {plural(s.revisions, 'revision round')}"),
    Rule(lambda s, cfg: bool(s.warnings), -1, lambda s: "validation warned: " + "; ".join(s.warnings)),
    Rule(lambda s, cfg: s.empty, -1, lambda s: "the result is empty"),
    Rule(lambda s, cfg: s.coverage is not None and s.coverage < cfg.min_coverage, -1,
         lambda s: f"the schema names few of the question's words (not {', '.join(s.missing_terms)})"),
    Rule(lambda s, cfg: bool(s.asked_missing), -1,
         lambda s: f"queries asked for {', '.join(s.asked_missing)}, which the schema lacks"),
)


@dataclass(frozen=True)
class Confidence:
    level: str
    reasons: tuple[str, ...]


def starting_level(signals: Signals, cfg: ConfidenceSettings) -> tuple[int, str]:
    """The level the vote alone gives (an index into LEVELS) and its reason."""
    if signals.samples <= 1:
        return 1, "one sample, so no agreement to measure"
    agreeing = f"{signals.votes} of {signals.samples} samples agree on the result"
    if signals.vote_share >= cfg.high_vote_share:
        return 2, agreeing
    return (1 if signals.vote_share >= cfg.medium_vote_share else 0), agreeing


def assess(signals: Signals, cfg: ConfidenceSettings) -> Confidence:
    """The answer's level and every reason that set or moved it (see the table in the module docstring)."""
    if signals.error is not None:
        return Confidence("low", (f"the query failed: {signals.error}",))
    level, reason = starting_level(signals, cfg)
    reasons = [reason]
    for rule in RULES:
        if rule.applies(signals, cfg):
            level += rule.moves
            reasons.append(rule.reason(signals))
    return Confidence(LEVELS[max(0, min(level, len(LEVELS) - 1))], tuple(reasons))


def chosen_group(selection: Selection) -> Group | None:
    return next((g for g in selection.groups if selection.chosen in g.members), None)


def sampled_votes(executions: list[Execution]) -> int:
    """How many samples were drawn: the votes of the candidates as generated (a revision stands for its samples)."""
    return sum(ex.candidate.votes for ex in executions if ex.candidate.round == 0)


def alternatives(selection: Selection, cfg: ConfidenceSettings) -> list[dict[str, Any]]:
    """The results of the other candidate groups, largest first: their SQL, votes and first rows."""
    chosen = chosen_group(selection)
    shown = []
    for group in [g for g in selection.groups if g is not chosen][: cfg.alternatives]:
        ex = group.representative
        result = ex.result
        shown.append({
            "sql": ex.candidate.sql, "votes": group.votes, "columns": list(result.columns) if result else [],
            "rows": [list(r) for r in result.rows[: cfg.alternative_rows]] if result else [],
            "row_count": len(result.rows) if result else 0,
        })
    return shown
