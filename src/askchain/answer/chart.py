"""A chart chosen from the result's shape: a line for a time series, bars for categories, none otherwise."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from askchain.errors import require

MAX_BARS = 50
MAX_POINTS = 5000
MAX_SERIES = 4

_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([+-]\d{2}:?\d{2}|Z| UTC)?$")
_TIME_NAME = re.compile(r"(^|_)(date|day|week|month|year|hour|time|timestamp|ts|period)s?($|_)", re.IGNORECASE)
_ID_NAME = re.compile(r"(^|_)id$", re.IGNORECASE)


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
    numeric = [i for i in range(len(columns)) if _is_numeric(_column(rows, i))]
    if _is_time(columns[0], _column(rows, 0)):
        y = tuple(i for i in numeric if i != 0 and not _ID_NAME.search(columns[i]))[:MAX_SERIES]
        return ChartChoice("line", 0, y) if y else None
    categories = [i for i in range(len(columns)) if i not in numeric]
    y = tuple(i for i in numeric if not _ID_NAME.search(columns[i]))[:MAX_SERIES]
    if not categories or not y or len(rows) > MAX_BARS:
        return None
    return ChartChoice("bar", categories[0], y)


def chart_spec(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, Any] | None:
    """{"kind", "figure"}: a Plotly figure as JSON for the UI to render, or None when no chart fits."""
    choice = choose_chart(columns, rows)
    if choice is None:
        return None
    go = require("plotly.graph_objects", "server")
    points = [r for r in rows if r[choice.x] is not None][:MAX_POINTS]
    if choice.kind == "line":
        points.sort(key=lambda r: _sort_key(r[choice.x]))
    xs = [_plain(r[choice.x]) for r in points]
    figure = go.Figure()
    for i in choice.y:
        ys = [_plain(r[i]) for r in points]
        if choice.kind == "line":
            figure.add_trace(go.Scatter(x=xs, y=ys, name=str(columns[i]), mode="lines+markers" if len(xs) <= 60 else "lines"))
        else:
            figure.add_trace(go.Bar(x=[str(x) for x in xs], y=ys, name=str(columns[i])))
    y_title = str(columns[choice.y[0]]) if len(choice.y) == 1 else ""
    figure.update_layout(
        template="plotly_white",
        height=360,
        margin={"l": 56, "r": 16, "t": 24, "b": 56},
        showlegend=len(choice.y) > 1,
        xaxis={"title": {"text": str(columns[choice.x])}, "type": "category" if choice.kind == "bar" else "-", "automargin": True},
        yaxis={"title": {"text": y_title}, "automargin": True},
        barmode="group",
    )
    return {"kind": choice.kind, "figure": json.loads(figure.to_json())}


def _column(rows: Sequence[Sequence[Any]], index: int) -> list[Any]:
    return [r[index] for r in rows if r[index] is not None]


def _is_numeric(values: list[Any]) -> bool:
    return bool(values) and all(isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) for v in values)


def _is_time(name: str, values: list[Any]) -> bool:
    if not values:
        return False
    if all(isinstance(v, (dt.date, dt.datetime)) for v in values):
        return True
    if all(isinstance(v, str) and _ISO_DATE.match(v.strip()) for v in values):
        return True
    # Whole numbers under a time-like name: years (2021), months (1-12), hours, block timestamps.
    return bool(_TIME_NAME.search(name)) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _sort_key(value: Any) -> Any:
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value
