"""A chart chosen from the result's shape: a line for a time series, bars for categories, none otherwise. The web UI
draws it from a Plotly spec, the CLI writes it with matplotlib; both from the same choice."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from askchain.answer.shape import column, is_time, labels, measures, shorten, time_order
from askchain.errors import AskchainError, require

MAX_BARS = 50
MAX_POINTS = 5000
MAX_SERIES = 4
#: Files the CLI writes a chart to, by suffix: matplotlib's format names.
FILE_FORMATS = {".png": "png", ".svg": "svg"}


@dataclass(frozen=True)
class ChartChoice:
    kind: str  # "line" or "bar"
    x: int  # column index of the axis
    y: tuple[int, ...]  # column indexes of the plotted numbers


def choose_chart(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> ChartChoice | None:
    """Line when the first column is a date/time (or a year/month number) with numbers beside it; bars for
    up to MAX_BARS categories with numbers; None for a single value, a single row or no numbers to plot."""
    if len(rows) < 2 or len(columns) < 2:
        return None
    found = measures(columns, rows)
    if is_time(columns[0], column(rows, 0)):
        y = tuple(i for i in found if i != 0)[:MAX_SERIES]
        return ChartChoice("line", 0, y) if y else None
    categories = labels(columns, rows)
    y = tuple(found)[:MAX_SERIES]
    if not categories or not y or len(rows) > MAX_BARS:
        return None
    return ChartChoice("bar", categories[0], y)


def chart_points(choice: ChartChoice, rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The rows to plot: those with an x value, in time order for a line, capped at MAX_POINTS."""
    points = [r for r in rows if r[choice.x] is not None][:MAX_POINTS]
    if choice.kind == "line":
        points.sort(key=lambda r: time_order(r[choice.x]))
    return points


def chart_spec(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, Any] | None:
    """{"kind", "figure"}: a Plotly figure as JSON for the UI to render, or None when no chart fits."""
    choice = choose_chart(columns, rows)
    if choice is None:
        return None
    go = require("plotly.graph_objects", "server")
    points = chart_points(choice, rows)
    xs = [_plain(r[choice.x]) for r in points]
    figure = go.Figure()
    for i in choice.y:
        ys = [_plain(r[i]) for r in points]
        if choice.kind == "line":
            figure.add_trace(go.Scatter(x=xs, y=ys, name=str(columns[i]), mode="lines+markers" if len(xs) <= 60 else "lines"))
        else:
            figure.add_trace(go.Bar(x=[str(x) for x in xs], y=ys, name=str(columns[i])))
    figure.update_layout(
        template="plotly_white",
        height=360,
        margin={"l": 56, "r": 16, "t": 24, "b": 56},
        showlegend=len(choice.y) > 1,
        xaxis={"title": {"text": str(columns[choice.x])}, "type": "category" if choice.kind == "bar" else "-", "automargin": True},
        yaxis={"title": {"text": _y_title(columns, choice)}, "automargin": True},
        barmode="group",
    )
    return {"kind": choice.kind, "figure": json.loads(figure.to_json())}


def chart_file_format(path: Path) -> str:
    """The file format a chart path asks for, checked before the question runs so a typo costs no model time."""
    fmt = FILE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise AskchainError(f"cannot write a chart to '{path.name}': use a {' or '.join(FILE_FORMATS)} file name")
    return fmt


def save_chart(columns: Sequence[str], rows: Sequence[Sequence[Any]], path: Path) -> bool:
    """Write the result's chart (the same choice as the web UI's) as PNG or SVG by the path's suffix.
    False when no chart fits the result, so nothing is written."""
    fmt = chart_file_format(path)
    choice = choose_chart(columns, rows)
    if choice is None:
        return False
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global figure state
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    points = chart_points(choice, rows)
    figure = Figure(figsize=(8, 4.5), dpi=120, layout="constrained")
    axes = figure.add_subplot()
    if choice.kind == "line":
        xs = _time_axis([r[choice.x] for r in points])
        for i in choice.y:
            axes.plot(xs, [_number(r[i]) for r in points], marker="o" if len(xs) <= 60 else None, label=str(columns[i]))
        figure.autofmt_xdate()
    else:
        positions = range(len(points))
        width = 0.8 / len(choice.y)
        for k, i in enumerate(choice.y):
            offset = (k - (len(choice.y) - 1) / 2) * width
            axes.bar([p + offset for p in positions], [_number(r[i]) for r in points], width, label=str(columns[i]))
        axes.set_xticks(list(positions), [shorten(str(r[choice.x])) for r in points],
                        rotation=45 if len(points) > 6 else 0, ha="right" if len(points) > 6 else "center")
    axes.set_xlabel(str(columns[choice.x]))
    axes.set_ylabel(_y_title(columns, choice))
    axes.grid(axis="y", alpha=0.3)
    if all(isinstance(r[i], int) for r in points for i in choice.y if r[i] is not None):
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 0.5 blocks on the axis
        axes.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))  # 48,000 as the answer writes it
    if len(choice.y) > 1:
        axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format=fmt)
    return True


def _y_title(columns: Sequence[str], choice: ChartChoice) -> str:
    return str(columns[choice.y[0]]) if len(choice.y) == 1 else ""


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _time_axis(values: list[Any]) -> list[Any]:
    """Dates for matplotlib's date axis: ISO strings parsed when Python reads them all, else kept as categories."""
    if not all(isinstance(v, str) for v in values):
        return values
    try:
        return [dt.datetime.fromisoformat(v.strip().removesuffix(" UTC")) for v in values]
    except ValueError:
        return values
