"""The checks of the domain definitions a question calls for (`checks:` of a semantic-layer entry: a question in gwei
must not divide by 1e18), each with the message that tells the reviser what to fix. Most are predicates on the
query's tree as written (askchain.semantic.predicates: a LIMIT, a call, a division), read from the analysis's parse;
the rest are regular expressions over the text. A query sqlglot cannot parse is held to its regular expressions
only, so the rule waits on no gate. The patterns and predicates are filled with placeholder values and built when
the rule is made, so one that breaks once filled (an unescaped `{40}` quantifier, an unknown predicate) fails at
load, not on every candidate.

Ethereum's checks that stay regular expressions (src/askchain/domains/ethereum/semantic.yaml), and why: none today;
every one of its 36 is a predicate (docs/architecture.md, "Rules")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from sqlglot import exp

from askchain.errors import ConfigError
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.semantic.layer import Entry, check_errors
from askchain.semantic.predicates import query_or_none


@dataclass(frozen=True)
class EntryChecks(Check):
    """The checks of the entries the question calls for (a domain instantiates it with its entries)."""

    id = "entry_checks"
    order = 300
    reads_tree = False
    entries: tuple[Entry, ...] = ()

    def __post_init__(self) -> None:
        for entry in self.entries:
            if errors := [error for check in entry.checks for error in check_errors(check)]:
                raise ConfigError(f"entry {entry.name} has {errors[0]}")

    def applies(self, analysis: Analysis) -> bool:
        return bool(analysis.readings)

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        def tree() -> exp.Expression | None:
            return query_or_none(analysis.parsed_or_none(analysis.dialect))

        for reading in analysis.readings:
            for message in reading.findings(analysis.sql, analysis.dialect, tree):
                yield self.error(message)


def entry_checks(entries: Iterable[Entry]) -> EntryChecks:
    return EntryChecks(tuple(entries))
