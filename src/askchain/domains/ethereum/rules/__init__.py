"""Ethereum's rules: the core's parametrised rules instantiated from its semantic layer (units, column aliases,
shorthands, windows, the ranking measure, the entries' checks, a series in time order), and its own (32-byte word padding, hex grounding)."""

from __future__ import annotations

from askchain.domains.ethereum.rules.grounding import UnaskedConstants, UngroundedLiterals, UnusedQuestionConstants
from askchain.domains.ethereum.rules.word_padding import WordPadding
from askchain.rules.base import Rule
from askchain.rules.checks.entry_checks import entry_checks
from askchain.rules.checks.figures_not_given import FiguresNotGiven
from askchain.rules.checks.labels_with_keys import LabelsWithKeys
from askchain.rules.checks.raw_amounts import RawAmounts
from askchain.rules.checks.tiny_figures import TinyFigures
from askchain.rules.repairs.amounts_as_given import AmountsAsGiven
from askchain.rules.repairs.column_aliases import ColumnAliases
from askchain.rules.repairs.ranking_measure import RankingMeasure
from askchain.rules.repairs.series_order import SeriesInTimeOrder
from askchain.rules.repairs.shorthands import ExpandShorthands
from askchain.rules.repairs.windows import ConformWindows
from askchain.semantic import Layer


def layer_rules(layer: Layer) -> list[Rule]:
    """The rules the layer's data asks for."""
    units = layer.units_by_column
    rules: list[Rule] = [RawAmounts(units), TinyFigures(units), FiguresNotGiven(units), AmountsAsGiven(units),
                         entry_checks(layer.entries), ExpandShorthands(layer.shorthands),
                         ColumnAliases(layer.column_aliases), ConformWindows(), SeriesInTimeOrder()]
    if layer.word_columns:
        rules.append(WordPadding(layer.word_columns))
    if layer.labels:
        rules.append(LabelsWithKeys(layer.labels))
    if layer.show_ranking_measure:
        rules.append(RankingMeasure(tuple(column for unit in layer.units for column in unit.columns)))
    if layer.grounded_literals:
        grounded = layer.grounded_literals
        rules += [UngroundedLiterals(grounded), UnusedQuestionConstants(grounded), UnaskedConstants(grounded)]
    return rules
