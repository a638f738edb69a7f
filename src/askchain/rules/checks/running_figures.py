"""A running total or a moving average the question asks of a series over time, and a query that computes none
(`SELECT DATE(block_timestamp) AS day, COUNT(*) ... GROUP BY day` for "the running total of transactions day by
day"): the rows are the series itself, they run, and the samples that wrote the same plain series outvote the one
that wrote the running figure. Each figure is a window over the series' order: a running total a SUM (or COUNT)
OVER (ORDER BY ...), a moving average an AVG OVER (ORDER BY ... ROWS BETWEEN n-1 PRECEDING AND CURRENT ROW). A query
that reads a column named for the figure (`receipt_cumulative_gas_used`) is left alone: the data holds it."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.generation.semantic_fit import ASKS_FOR_RUNNING_TOTAL, moving_average_asked
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding
from askchain.rules.repairs.series_order import time_keys
from askchain.rules.repairs.windows import time_columns


class RunningFiguresAsked(Check):
    """A running total or moving average asked of a series over time, computed by no window."""

    id = "running_figures"
    order = 115

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, dialect, question = analysis.written, analysis.schema.dialect, analysis.asked
        if any("cumulative" in column.name.lower() for column in tree.find_all(exp.Column)):
            return
        times = time_columns(analysis.schema)
        series = next((key for select in tree.find_all(exp.Select) for key in time_keys(select, times)), None)
        if series is None:
            return
        order = series.sql(dialect=dialect)
        if ASKS_FOR_RUNNING_TOTAL.search(question) and not _windowed(tree, (exp.Sum, exp.Count), framed=False):
            yield self.error(
                f"the question asks for a running total, and the query computes none over its series by {order}: "
                f"add it as a window over the series, SUM(x) OVER (ORDER BY {order}), beside or instead of x")
        elif (n := moving_average_asked(question)) is not None and not _windowed(tree, (exp.Avg,), framed=True):
            preceding = f"{n - 1} PRECEDING" if n > 1 else "n-1 PRECEDING"
            yield self.error(
                f"the question asks for a moving average, and the query computes none over its series by {order}: "
                f"add it as a window over the series, AVG(x) OVER (ORDER BY {order} ROWS BETWEEN {preceding} AND "
                "CURRENT ROW), reading the periods before the first one shown so that its average is over as many")


def _windowed(tree: exp.Expression, aggregates: tuple[type[exp.Expression], ...], framed: bool) -> bool:
    """Whether the query takes one of `aggregates` over an ordered window (with a frame of rows, where `framed`)."""
    return any(isinstance(window.this, aggregates) and window.args.get("order")
               and (not framed or window.args.get("spec")) for window in tree.find_all(exp.Window))
