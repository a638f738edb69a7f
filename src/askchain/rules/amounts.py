"""Amounts stored in a base unit (wei) a user never reads: which columns a result keeps in their unit, and the
figures compared with them that are none of the question's amounts. The unit checks and the repair that writes a
figure as the question's amount read them."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterator, Mapping, NamedTuple

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from askchain.db.dialects import parse_one
from askchain.db.schema import Column, Schema, Table
from askchain.numbers import NUMBER, value_of
from askchain.rules.analysis import Analysis, own_nodes, schema_column, scope_tables
from askchain.rules.base import Rule
from askchain.rules.sql import constant, weighed
from askchain.semantic.layer import Unit

#: What a result column may do to an amount and still show it in the amount's unit: rename, cast, round, aggregate
#: (a sum of wei is wei), multiply by another column (gas used times a price per gas is a fee in wei), add or
#: subtract amounts. A product with a number (`value * 1e-18`) may be a conversion, so it is not judged.
KEEPS_UNIT = (exp.Alias, exp.Paren, exp.Cast, exp.TryCast, exp.Round, exp.Sum, exp.Avg, exp.Min, exp.Max,
              exp.AnyValue, exp.Mul, exp.Add, exp.Sub)


@dataclass(frozen=True)
class UnitRule(Rule):
    """A rule a domain makes with its units, with nothing to do without them: what the unit checks and the amounts
    repair share."""

    #: The unit of each base-unit column ("table.column", lower case).
    units: Mapping[str, Unit]

    def applies(self, analysis: Analysis) -> bool:
        return bool(self.units)

    def shown_units(self, question: str) -> dict[str, Unit]:
        """The units whose amounts must not be shown or weighed raw: all but those `question` asks in ("in wei")."""
        return {column: unit for column, unit in self.units.items() if not unit.asked_in(question)}


#: Comparisons that weigh an amount against a figure (an equality with a non-zero figure of wei is as unlikely).
WEIGHINGS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.Between)


class FigureNotGiven(NamedTuple):
    """An amount compared with a figure that is none of the question's amounts."""

    comparison: exp.Expression
    figure: exp.Expression
    #: "table.column" of the amount, its unit, and the factor the comparison's side multiplies it by
    #: (`value / 1e18`: 1e-18).
    column: str
    unit: Unit
    factor: float
    #: The figure read in the column's unit.
    meant: float
    #: The question's amounts in the unit's scales (number as written, scale word), and the one the figure was
    #: meant as: the one whose number the figure writes (also a number the question writes without a scale word, as
    #: "1" in "between 1 and 10 ETH"), else the closest to it in powers of ten (not a bare number: "the last 7 days").
    given: list[tuple[str, str]]
    closest: tuple[str, str]

    @property
    def figure_as_given(self) -> str:
        """The figure the comparison's side needs for the amount meant: one of the question's numbers where one is
        it (`value / 1e18 > 10`), else the number times its scale (`value > 10 * 1e18`)."""
        number, word = self.closest
        ratio = self.unit.scales[word] * self.factor
        target = value_of(number) * ratio
        same = next((n for n, _ in self.given if math.isclose(value_of(n), target, rel_tol=1e-9)), None)
        if same is not None:
            return same.replace(",", "")
        return f"{number.replace(',', '')} * {_written_scale(ratio)}"

    def as_given(self) -> exp.Expression:
        """The comparison with the figure meant."""
        rewritten = self.comparison.copy()
        key = next(k for k, v in self.comparison.args.items() if v is self.figure)
        rewritten.set(key, parse_one(self.figure_as_given))
        return rewritten


def figures_not_given(tree: exp.Expression, schema: Schema, units: Mapping[str, Unit],
                      question: str) -> Iterator[FigureNotGiven]:
    """Each comparison of an amount with a figure that is none of the question's amounts in the scales it writes
    (when it writes one). The figure is read in the column's unit through the conversion written on either side
    (`value / 1e18 > 10` is `value > 10 * 1e18`); zero (or less) is a bound in any unit, the question's other numbers
    count too ("0.1 to 1 ETH"), and a range's bound in a histogram may stand for none (`x < 1e30` for "or more")."""
    numbers = NUMBER.findall(question)
    for scope in traverse_scope(tree):
        tables = scope_tables(scope, schema)
        for comparison in own_nodes(scope, *WEIGHINGS):
            if comparison.find_ancestor(exp.Case, exp.If, exp.CountIf):
                continue
            for amount, figure in weighed(comparison):
                bound, scaled = constant(figure), scaled_column(amount)
                found = schema_column(scaled[0], tables) if scaled and bound and bound > 0 else None
                unit = units.get(f"{found[0].name}.{found[1].name}".lower()) if found else None
                given = amounts_given(question, unit) if unit else []
                if not given:
                    continue
                meant, amounts = bound / scaled[1], _amounts_meant(given, numbers)
                in_unit = {amount: value_of(amount[0]) * unit.scales[amount[1]] for amount in amounts}
                if any(math.isclose(meant, value, rel_tol=1e-9) for value in in_unit.values()):
                    continue
                closest = next((a for a in amounts if math.isclose(bound, value_of(a[0]), rel_tol=1e-9)), None) or \
                    min(given, key=lambda a: _orders_apart(meant, in_unit[a]))
                yield FigureNotGiven(comparison, figure, f"{found[0].name}.{found[1].name}", unit, scaled[1], meant,
                                     given, closest)


def amounts_given(question: str, unit: Unit) -> list[tuple[str, str]]:
    """The amounts `question` writes in one of the unit's scales ("10 ETH", "1,000 ether"): number and scale word as
    the unit spells it; none for a unit without scales."""
    if not unit.scales:
        return []
    words = {word.lower(): word for word in unit.scales}
    pattern = rf"(?P<number>{NUMBER.pattern})\s*(?P<word>{'|'.join(map(re.escape, words))})\b"
    return [(match["number"], words[match["word"].lower()])
            for match in re.finditer(pattern, question, re.IGNORECASE)]


def _amounts_meant(given: list[tuple[str, str]], numbers: list[str]) -> list[tuple[str, str]]:
    """The question's amounts as (number, scale word): each written with a scale word in that scale, each other number
    in any scale the question writes ("0.1 to 1 ETH": 0.1 ETH too; in "32 ETH, i.e. 32,000,000,000 gwei" the second
    is no amount of ETH)."""
    written = {value_of(number) for number, _ in given}
    words = list(dict.fromkeys(word for _, word in given))
    return given + [(number, word) for number in numbers if value_of(number) not in written for word in words]


def _orders_apart(one: float, other: float) -> float:
    """How many powers of ten apart two figures are (the finding names the amount the figure is closest to)."""
    return abs(math.log10(abs(one) / abs(other))) if one and other else math.inf


def _written_scale(scale: float) -> str:
    """A scale as a query writes it: a power of ten as `1e18`, any other number as itself."""
    power = math.log10(scale) if scale > 0 else 0.5
    return f"1e{round(power)}" if power.is_integer() and power >= 3 else f"{scale:g}"


#: What a comparison may do to an amount and still weigh that amount: casts, aggregates, parentheses.
WEIGHS_AN_AMOUNT = (exp.Paren, exp.Cast, exp.TryCast, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.AnyValue, exp.Round)


def scaled_column(node: exp.Expression) -> tuple[exp.Column | exp.Dot, float] | None:
    """The column (or record field) `node` weighs and the (non-zero) number it is multiplied by on the way (`value /
    1e18`: 1e-18); None for anything but a column, cast, aggregated, multiplied or divided by constants."""
    if isinstance(node, (exp.Column, exp.Dot)):
        return node, 1.0
    if isinstance(node, WEIGHS_AN_AMOUNT):
        return scaled_column(node.this)
    if isinstance(node, (exp.Mul, exp.Div)):
        sides = [(node.this, node.expression)] + ([(node.expression, node.this)] if isinstance(node, exp.Mul) else [])
        for inner, by in sides:
            scaled, number = scaled_column(inner), constant(by)
            factor = (scaled[1] * number if isinstance(node, exp.Mul) else scaled[1] / number) if scaled and number \
                else 0.0
            if factor and math.isfinite(factor):
                return scaled[0], factor
    return None


def amounts_in_base_units(node: exp.Expression, tables: dict[str, Table],
                           shown_units: Mapping[str, Unit]) -> list[tuple[str, Column, Unit]]:
    """The schema columns whose unit `node` keeps and that are stored in a base unit: ("table.column", column, unit)."""
    found = [schema_column(column, tables) for column in amounts_kept(node)]
    named = [(f"{table.name}.{column.name}", column) for table, column in filter(None, found)]
    return [(name, column, shown_units[name.lower()]) for name, column in named if name.lower() in shown_units]


def amounts_kept(node: exp.Expression) -> list[exp.Column | exp.Dot]:
    """The columns (or fields of an UNNESTed record) whose unit `node` keeps (see KEEPS_UNIT)."""
    if isinstance(node, (exp.Column, exp.Dot)):
        return [node]
    if isinstance(node, exp.Mul) and any(isinstance(side, exp.Literal) for side in (node.left, node.right)):
        return []
    if isinstance(node, KEEPS_UNIT):
        return [column for child in node.iter_expressions() for column in amounts_kept(child)]
    return []
