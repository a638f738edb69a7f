"""The one shape of a check and a repair: a `Rule` with an id, a kind, an order and when it applies, run over one
`Analysis` of the candidate. A check yields `Finding` records (its id, the message a reviser acts on, the names it
is about), which abstention and error classes read by id; a repair returns the query with text edits applied, so the
model's own text stays where nothing is wrong."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Iterator, Literal

from sqlglot.errors import SqlglotError

from askchain.errors import describe, first_line

if TYPE_CHECKING:
    from askchain.rules.analysis import Analysis

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Finding:
    """What one rule found wrong: an error sends the query to revision, a warning only lowers confidence."""

    rule: str
    message: str
    #: The names (tables, columns) the finding says the query asked for in vain, for abstention to read.
    names: tuple[str, ...] = ()
    error: bool = True
    #: Which of its rule's problems it is, where a rule tells several apart (the columns rule: "unknown",
    #: "unreadable", "ambiguous", "unresolved"); what error classes read beside the rule id.
    kind: str = ""


class Findings:
    """A query's findings in the order the rules found them."""

    def __init__(self, errors: Iterable[str] = (), warnings: Iterable[str] = (), found: Iterable[Finding] = ()):
        """`errors` and `warnings` are messages of no rule (a problem found before the rules ran)."""
        self.found = [Finding("", m) for m in errors] + [Finding("", m, error=False) for m in warnings] + list(found)

    @property
    def errors(self) -> list[str]:
        return [f.message for f in self.found if f.error]

    @property
    def warnings(self) -> list[str]:
        return [f.message for f in self.found if not f.error]

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        return "; ".join(self.errors + self.warnings)

    def __repr__(self) -> str:
        return f"Findings(errors={self.errors!r}, warnings={self.warnings!r})"


#: A repair's result: the query's text and what was changed, in words (none: unchanged).
Repaired = tuple[str, list[str]]


@dataclass(frozen=True)
class RepairsApplied:
    """What the repairs together made of a query: its text, what they changed in words, and which rules changed it
    (their ids, for traces: what switching a rule off would leave as the model wrote it)."""

    sql: str
    notes: list[str]
    rules: list[str]


@dataclass(frozen=True)
class Rule:
    """A check or a repair. `order` places it among the rules of its kind (core and domain rules alike)."""

    kind: ClassVar[Literal["check", "repair"]]
    id: ClassVar[str]
    order: ClassVar[int]
    #: Whether prompts show the rule's data (the shorthands a repair expands): switched off, every question changes,
    #: not only those it acted on (askchain.eval.ablation).
    shapes_prompts: ClassVar[bool] = False

    def applies(self, analysis: Analysis) -> bool:
        """Whether the rule has anything to do for this candidate (its data, the question's definitions)."""
        return True


@dataclass(frozen=True)
class Check(Rule):
    kind: ClassVar = "check"
    #: Errors of a gate leave the tree unreadable for the rules that read it: those after it do not run.
    gate: ClassVar[bool] = False
    #: Whether the rule reads the tree (and so waits on the gates); a check of the text alone always runs.
    reads_tree: ClassVar[bool] = True

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        raise NotImplementedError

    def error(self, message: str, *names: str) -> Finding:
        return Finding(self.id, message, names)

    def warning(self, message: str) -> Finding:
        return Finding(self.id, message, error=False)


@dataclass(frozen=True)
class Repair(Rule):
    kind: ClassVar = "repair"

    def repair(self, analysis: Analysis) -> Repaired:
        raise NotImplementedError


def check_all(analysis: Analysis, checks: Iterable[Check]) -> Findings:
    """Every check that applies, in order, each guarded: what the model writes can never stop a question."""
    findings = Findings()
    gated = False
    for rule in checks:
        if (gated and rule.reads_tree) or not rule.applies(analysis):
            continue
        before = len(findings.errors)
        try:
            for finding in rule.check(analysis):
                findings.found.append(finding)
        except SqlglotError as exc:  # a construct sqlglot cannot follow: the database judges it
            log.debug("validation step %s skipped: %s", rule.id, first_line(exc))
        except Exception as exc:  # noqa: BLE001 - any bug in one check, whatever its type
            message = f"validation step {rule.id} failed: {describe(exc)}"
            log.warning(message)
            log.debug(message, exc_info=exc)
            findings.found.append(Finding(rule.id, message, error=False))
        gated = gated or (rule.gate and len(findings.errors) > before)
    return findings


def repair_all(analysis: Analysis, repairs: Iterable[Repair]) -> RepairsApplied:
    """Every repair that applies, in order, each on the text the ones before it left; a repair that fails leaves
    the query as it is, for validation."""
    notes: list[str] = []
    rules: list[str] = []
    for rule in repairs:
        try:
            sql, found = rule.repair(analysis) if rule.applies(analysis) else (analysis.sql, [])
        except Exception as exc:  # noqa: BLE001 - a bug in one repair leaves the query as it is
            log.warning("a repair failed on a candidate and was skipped: %s", describe(exc))
            sql, found = analysis.sql, []
        notes += found
        rules += [rule.id] if found else []
        analysis = analysis.of(sql)
    return RepairsApplied(analysis.sql, notes, rules)
