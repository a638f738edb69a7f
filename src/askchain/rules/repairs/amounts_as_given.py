"""A figure compared with an amount is written as the amount the question gives.

"How many transactions moved more than 10 ETH?" is `value > 10 * 1e18`. A 1.5B model gets the zeros wrong in most
samples (`value > 1000000000000000`, `value > 10000000000`, `value > 10`): the query runs, and counts other
transactions. Validation finds each such figure (`figures_not_given`), and a revision asked to fix it often rewrites
the rest of the query; a sample that runs, however wrong, is preferred over sending them back. The figure the question
meant is known (the question's amount whose number the figure writes, else the closest in powers of ten), so the
edit is askchain's: the figure is written as that amount, in the scale the comparison's side reads the column in
(`value / 1e18 > 10`, `value > 10 * 1e18`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from sqlglot import exp

from askchain.db.schema import Schema
from askchain.generation.sql_text import Edit, apply_edits
from askchain.rules.amounts import UnitRule, figures_not_given
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.semantic.layer import Unit

#: What a figure rewritten in place may be made of: numbers and the arithmetic between them, as written.
WRITTEN_FIGURE = (exp.Literal, exp.Mul, exp.Div, exp.Paren)


def amounts_as_given(sql: str, schema: Schema, units: Mapping[str, Unit], question: str,
                     findings: Callable[[str], list[str]], tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` with each figure compared with an amount written as the question's amount it stands for, and what was
    rewritten; unchanged (no notes) when every figure is one of the question's amounts (or the question gives none),
    a figure is more than numbers and arithmetic, two different figures would become one amount (the ends of a range,
    `value > 1e15 AND value < 1e17`: which is which is not known), or the rewritten query's findings (by `findings`,
    the query's validation) are not fewer than before and all among them.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    tree = readable(sql, schema.dialect, tree)
    if tree is None:
        return sql, []
    edits: list[Edit] = []
    figures: dict[str, set[str]] = {}  # each amount written -> the figures written as it
    for found in figures_not_given(tree, schema, units, question):
        span = _written_span(found.figure)
        if span is None:
            return sql, []
        number, word = found.closest
        written = found.figure.sql(dialect=schema.dialect, comments=False)
        figures.setdefault(found.figure_as_given, set()).add(written)
        edits.append((*span, found.figure_as_given,
                      f"wrote {written} as {number} {word}, the question's amount: {found.figure_as_given}"))
    if not edits or any(len(written) > 1 for written in figures.values()):
        return sql, []
    written, notes = apply_edits(sql, edits)
    before, after = set(findings(sql)), set(findings(written))
    return (written, notes) if after < before else (sql, [])


def _written_span(figure: exp.Expression) -> tuple[int, int] | None:
    """The first and last character of a figure made of numbers only, as written; None for anything else."""
    if any(not isinstance(node, WRITTEN_FIGURE) for node in figure.walk()):
        return None
    literals = [node for node in figure.find_all(exp.Literal)]
    if not literals or any("start" not in node.meta for node in literals):
        return None
    return min(node.meta["start"] for node in literals), max(node.meta["end"] for node in literals)


@dataclass(frozen=True)
class AmountsAsGiven(UnitRule, Repair):
    """A figure compared with an amount written as the question's amount (a domain instantiates it with its units)."""

    id = "amounts_as_given"
    order = 100

    def applies(self, analysis: Analysis) -> bool:
        return super().applies(analysis) and analysis.errors_of is not None

    def repair(self, analysis: Analysis) -> Repaired:
        return amounts_as_given(analysis.sql, analysis.schema, self.units, analysis.asked, analysis.errors_of,
                                analysis.parsed_or_none())
