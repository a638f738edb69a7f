"""Static checks before execution: a loop over the rules (askchain.rules) on one analysis of the candidate. Errors
send a candidate to revision instead of the database; warnings lower confidence."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from askchain.db.schema import Schema
from askchain.rules.analysis import Analysis
from askchain.rules.base import Findings, Rule, check_all
from askchain.rules.checks.figures_not_given import FiguresNotGiven
from askchain.rules.checks.raw_amounts import RawAmounts
from askchain.rules.checks.tiny_figures import TinyFigures
from askchain.rules.registry import CORE, checks, ordered
from askchain.semantic.layer import Reading, Unit


def validate_sql(sql: str, schema: Schema, known_functions: set[str] | None = None,
                 units: Mapping[str, Unit] | None = None, question: str = "") -> Findings:
    """The core checks' findings about a query, never an exception; with `units` ("table.column", lower case, to
    its base unit) the unit checks too, against the amounts and unit `question` asks for."""
    unit_rules = [RawAmounts(units), TinyFigures(units), FiguresNotGiven(units)] if units else []
    analysis = Analysis(sql, schema, question=question, known_functions=known_functions)
    return check_all(analysis, checks(ordered([*CORE, *unit_rules])))


def asked(question: str, hint: str) -> str:
    """What a run is asked: the question, and a hint's words (a planned step's earlier rows ask too)."""
    return " ".join(filter(None, [question, hint]))


def validate_for_question(sql: str, schema: Schema, question: str, rules: Iterable[Rule],
                          readings: Sequence[Reading] | None, hint: str = "") -> Findings:
    """`sql`'s findings as the answer to `question` (with its `hint`) by `rules` (the core's and the domain's, in
    order; askchain.rules.registry.rules_for): the domain's checks read the definitions the question calls for
    (`readings`; None where they were not looked up)."""
    analysis = Analysis(sql, schema, question=question, asked=asked(question, hint), readings=readings)
    return check_all(analysis, checks(rules))
