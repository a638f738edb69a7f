"""The core rules and a domain's, in one order: what validation and the repairer loop over.

A core rule that needs a domain's data (units, column aliases, shorthands) is a class the domain instantiates from
its data (`Domain.rules()`); the rules below need none. A rule's `order` places it among the rules of its kind,
whoever declares it."""

from __future__ import annotations

from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterable, Mapping

from askchain.errors import ConfigError
from askchain.rules.base import Check, Repair, Rule
from askchain.rules.checks.aggregates import AggregatesBesideColumns
from askchain.rules.checks.and_or_precedence import AndOrPrecedence
from askchain.rules.checks.arrays_as_values import ArraysAsValues
from askchain.rules.checks.columns import UnknownColumns
from askchain.rules.checks.division_by_one import DivisionByOne
from askchain.rules.checks.functions import UnknownFunctions
from askchain.rules.checks.groups_shown import GroupsShown
from askchain.rules.checks.joins import JoinsOffForeignKeys
from askchain.rules.checks.limit_on_one_row import LimitOnOneRow
from askchain.rules.checks.listed_values import EachListedValue
from askchain.rules.checks.literal_shapes import LiteralShapes
from askchain.rules.checks.nulls_inner_join import NullsAnInnerJoinDrops
from askchain.rules.checks.record_fields import RecordFields
from askchain.rules.checks.repeated_expressions import RepeatedExpressions
from askchain.rules.checks.running_figures import RunningFiguresAsked
from askchain.rules.checks.self_comparison import SelfComparison
from askchain.rules.checks.shares_of_the_filter import SharesOfTheFilter
from askchain.rules.checks.shortened_literals import ShortenedLiterals
from askchain.rules.checks.star import SelectStar
from askchain.rules.checks.syntax import Syntax
from askchain.rules.checks.tables import UnknownTables
from askchain.rules.checks.text_against_numbers import TextAgainstNumbers
from askchain.rules.repairs.date_parts import ExtractDateParts
from askchain.rules.repairs.qualifiers import KnownQualifiers
from askchain.rules.repairs.shares import SharesAmongAllRows
from askchain.rules.repairs.unasked_limit import UnaskedLimit

if TYPE_CHECKING:
    from askchain.domain import Domain

#: The rules every database gets.
CORE: tuple[Rule, ...] = (
    Syntax(), UnknownTables(), UnknownColumns(), UnknownFunctions(), AggregatesBesideColumns(), LimitOnOneRow(),
    RepeatedExpressions(), SharesOfTheFilter(), DivisionByOne(), SelfComparison(), AndOrPrecedence(), GroupsShown(),
    EachListedValue(), RunningFiguresAsked(), TextAgainstNumbers(), ArraysAsValues(), LiteralShapes(),
    NullsAnInnerJoinDrops(), RecordFields(), JoinsOffForeignKeys(), SelectStar(), ShortenedLiterals(),
    KnownQualifiers(), ExtractDateParts(), SharesAmongAllRows(), UnaskedLimit(),
)


def ordered(rules: Iterable[Rule]) -> list[Rule]:
    """Rules in their order; a domain rule of an order a core rule has comes after it."""
    return sorted(rules, key=lambda rule: rule.order)


def rules_for(domain: Domain | None, off: Iterable[str] = ()) -> list[Rule]:
    """The core rules and the domain's, in order, but those whose ids are `off` (switched off to measure what they
    add: `pipeline.rules_off`)."""
    off = switched_off(off)
    return ordered([rule for rule in [*CORE, *(domain.rules() if domain else ())] if rule.id not in off])


def switched_off(ids: Iterable[str]) -> frozenset[str]:
    """The ids of rules to switch off, each checked to name a rule of the core or of an installed domain: an unknown
    id is a settings error, not a silent no-op."""
    ids = frozenset(ids)
    unknown = ids - rules_by_id().keys()
    if unknown:
        raise ConfigError(f"pipeline.rules_off names no rule: {', '.join(sorted(unknown))} (the rules: "
                          f"{', '.join(sorted(rules_by_id()))})")
    return ids


@cache
def rules_by_id() -> Mapping[str, Rule]:
    """Every rule of the core and of every installed domain, by id; read once, as the installed domains are fixed
    for the process (checking `rules_off` on every lookup of a run's rules costs nothing then)."""
    from askchain.domain import all_domains

    return MappingProxyType({rule.id: rule for rule in [*CORE, *(r for domain in all_domains() for r in domain.rules())]})


def checks(rules: Iterable[Rule]) -> list[Check]:
    return [rule for rule in rules if isinstance(rule, Check)]


def repairs(rules: Iterable[Rule]) -> list[Repair]:
    return [rule for rule in rules if isinstance(rule, Repair)]
