"""The checks of the domain definitions a question calls for (`checks:` of a semantic-layer entry: a question in gwei
must not divide by 1e18), each with the message that tells the reviser what to fix. They read the text, so they run
whatever the checks of the tree found. Their patterns are filled with placeholder values and compiled when the rule
is made, so a pattern that breaks once filled (an unescaped `{40}` quantifier) fails at load, not on every
candidate."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Iterable, Iterator

from askchain.errors import ConfigError
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.semantic.layer import Entry

#: What a pattern's `{value}` is filled with to compile it at load: a number, as the patterns capture.
PLACEHOLDER = "7"


@dataclass(frozen=True)
class EntryChecks(Check):
    """The requires/forbids rules of the entries the question calls for (a domain instantiates it with its entries)."""

    id = "entry_checks"
    order = 300
    reads_tree = False
    entries: tuple[Entry, ...] = ()

    def __post_init__(self) -> None:
        for entry in self.entries:
            for check in entry.checks:
                for pattern in filter(None, (check.applies, check.requires, check.forbids)):
                    _compiled(pattern, entry)

    def applies(self, analysis: Analysis) -> bool:
        return bool(analysis.readings)

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for reading in analysis.readings:
            for message in reading.findings(analysis.sql):
                yield self.error(message)


def _compiled(pattern: str, entry: Entry) -> re.Pattern:
    """`pattern` filled as a question would fill it, compiled; a ConfigError naming the entry when it cannot be."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(pattern) if name]
        return re.compile(pattern.format(**{name: PLACEHOLDER for name in names}), re.IGNORECASE)
    except (re.error, ValueError, KeyError, IndexError) as exc:
        raise ConfigError(f"entry {entry.name} has a check pattern {pattern!r} that does not compile once filled: "
                          f"{exc}") from exc


def entry_checks(entries: Iterable[Entry]) -> EntryChecks:
    return EntryChecks(tuple(entries))
