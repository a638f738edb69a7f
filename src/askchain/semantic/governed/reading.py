"""What a semantic model says about its models, names and windows, and the one-line reading of a query built from it.

The reading tells the user what was measured and how, from the model's own words: "failed share of transactions, a
fraction (0-1); window: the 7 full UTC days before today; grouped by day".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping

from askchain.semantic.governed.steps import StepRef

if TYPE_CHECKING:
    from askchain.semantic.governed.query import SemanticQuery

#: Dimension units a running total runs over (a date, a time, an hour).
TIME_UNITS = frozenset({"date", "timestamp", "hour"})
#: The series dimensions a moving average moves over, each with its period as an interval (unit, how many).
MOVING_PERIODS = {"day": ("days", 1), "week": ("days", 7), "month": ("months", 1)}
#: The dimensions that split by time (every model names them alike: `block_time` is the raw event time).
TIME_DIMENSIONS = frozenset({"block_time", "hour_of_day", "day", "weekday", "weekday_number", "week", "month",
                             "year", "day_of_year"})
#: The units of a measure that is a share of something.
SHARE_UNITS = frozenset({"fraction", "percentage"})
#: The aggregations whose values over rows add up to their value over all of them.
ADDITIVE = frozenset({"count", "sum"})
#: The aggregations of a measure that counts rows or values.
COUNTS = frozenset({"count", "nunique"})
#: An expression divided by another aggregate (`_.count(where=...) / _.count()`): a ratio, not a total in a unit.
_RATIO = re.compile(r"/\s*\(*\s*_\.")
#: A window's parameter in its name (`last_n_days`, `n_days_ago`).
_PARAMETER = re.compile(r"(?<![a-z])n(?![a-z])")
#: The aggregations a measure's expression may apply (`_.count(where=...)`, `_.value.sum() / 1e18`, `.mean()`...).
_AGGREGATION = re.compile(r"\.(sum|count|nunique|mean|max|min|median|quantile|mode|first|last|approx_\w+)\(")


@dataclass(frozen=True)
class Field:
    """A measure or a dimension: its description, unit, synonyms, the label a reading names it by, the
    well-known values (address or symbol and name) its metadata points to, its expression as the YAML writes it, and
    the values it takes where they are few and fixed."""

    name: str
    description: str
    unit: str
    label: str
    synonyms: tuple[str, ...] = ()
    known_values: tuple[dict, ...] = ()
    expr: str = ""
    #: Every value the dimension takes, where the model declares them (`values:`): a filter on another finds no row.
    values: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, config: Any, known: dict) -> Field:
        config = config if isinstance(config, dict) else {"expr": config}
        metadata = config.get("metadata") or {}
        return cls(
            name=name, description=config.get("description") or "", unit=metadata.get("unit", ""),
            label=metadata.get("label") or name.replace("_", " "), synonyms=tuple(metadata.get("synonyms") or ()),
            known_values=_known_values(metadata.get("well_known") or (), known, name),
            expr=str(config.get("expr") or ""), values=tuple(str(v) for v in metadata.get("values") or ()),
        )

    @property
    def aggregations(self) -> frozenset[str]:
        """The aggregations the measure's expression applies (`count`, `sum`, `mean`...): what its totals per period
        or per row found can be (summed, averaged, 0 where none)."""
        return frozenset(_AGGREGATION.findall(self.expr))

    @property
    def is_share(self) -> bool:
        """Whether the measure is a share (a fraction or a percentage) rather than an amount or a count."""
        return self.unit in SHARE_UNITS

    def aggregates_only(self, allowed: frozenset[str]) -> bool:
        """Whether the measure is no share and applies aggregations, all of them among `allowed`."""
        return not self.is_share and bool(self.aggregations) and self.aggregations <= allowed

    @property
    def counts(self) -> bool:
        """Whether the measure counts rows or values (a count, a distinct count; not a share of two counts): 0, not
        NULL, where no row is found."""
        return self.aggregates_only(COUNTS) and not _RATIO.search(self.expr)

    @property
    def adds_up(self) -> bool:
        """Whether the measure's values over rows add up to its value over all of them (a count, a sum; not a mean,
        a share or a distinct count, whose value may be in two rows): what a share of its total needs."""
        return self.aggregates_only(ADDITIVE) and not _RATIO.search(self.expr)

    def entry(self) -> dict:
        """The catalog's view of the field."""
        entry = {"name": self.name, "description": self.description, "unit": self.unit}
        if self.synonyms:
            entry["synonyms"] = list(self.synonyms)
        if self.known_values:
            entry["known_values"] = list(self.known_values)
        return entry


def _known_values(groups: list[str], known: dict, field_name: str) -> tuple[dict, ...]:
    """The well-known entities of the named groups as {value, name}: a symbol field takes their symbols, any other
    field their addresses (a group may be one object or a mapping of role to address)."""
    values = []
    for group in groups:
        entries = known.get(group, [])
        if isinstance(entries, dict):
            entries = [entries] if "address" in entries else [{"address": a, "name": r} for r, a in entries.items()]
        for entity in entries:
            value = entity.get("symbol") if "symbol" in field_name else entity.get("address")
            if value:
                values.append({"value": value, "name": entity.get("name", "")})
    return tuple(values)


@dataclass(frozen=True)
class ModelSpec:
    """What askchain knows of one semantic model besides its boring-semantic-layer object."""

    name: str
    description: str
    measures: dict[str, Field]
    dimensions: dict[str, Field]
    time: str | None  # the event time's expression (`_.block_timestamp`), or None for a table without one
    #: Each fraction measure's twin in percent (0-100), which a query asking for a percentage is given instead.
    percentages: dict[str, Field]
    #: What one row is called ("block"; "transaction" and "transfer"): a question listing so many of them ("the 5
    #: blocks with ...") asks for rows, not for aggregates (askchain.generation.semantic_doubt).
    rows: tuple[str, ...] = ()
    #: The dataset column (`table.column`) behind each column its expressions read, through its view's joins
    #: (`token_is_erc20`: `contracts.is_erc20`): what a free-SQL rule compares the model's fields with.
    sources: Mapping[str, str] = field(default_factory=dict)

    def running_over(self, dimensions: list[str]) -> str | None:
        """The dimension among `dimensions` a running total runs over: the first in a unit of time; None if none."""
        return next((d for d in dimensions if d in self.dimensions and self.dimensions[d].unit in TIME_UNITS), None)

    def moving_over(self, dimensions: list[str]) -> str | None:
        """The dimension among `dimensions` a moving average moves over: the first by day, week or month."""
        return next((d for d in dimensions if d in self.dimensions and d in MOVING_PERIODS), None)

    def in_percent(self) -> ModelSpec:
        """The spec whose measures include the percentage twins (for the reading of a query that uses them)."""
        twins = {twin.name: twin for twin in self.percentages.values()}
        return replace(self, measures={**self.measures, **twins})


@dataclass(frozen=True)
class WindowSpec:
    """A named window: a filter template over the event time `{time}` (None: no filter), and its parameter."""

    name: str
    description: str
    reading: str
    filter: str | None
    parameter: str | None
    #: How many hours the window spans, where that is fixed: a number (`24`) or a multiple of its parameter
    #: (`24 * n`); None for a window whose length varies (today so far, a calendar month).
    hours: int | str | None = None
    #: The window's first day as an ibis date (`{n}`: its parameter), where it has one: where a moving average
    #: reads back from.
    start: str | None = None
    #: The period of the same length just before the window, as another window (`{name, n}`; an `n` of "{n}" is
    #: this window's own), where it has one: what "compared with the 7 days before" sets it against.
    previous: Mapping[str, Any] | None = None
    #: The calendar period the window is made of (`day`, `week`, `month`), where it is one: a query split by it shows
    #: both periods of a comparison already.
    grain: str | None = None

    @classmethod
    def of(cls, name: str, config: dict) -> WindowSpec:
        return cls(name=name, description=config.get("description", ""), reading=config.get("reading", name),
                   filter=config.get("filter"), parameter=config.get("parameter"), hours=config.get("hours"),
                   start=config.get("start"), previous=config.get("previous"),
                   grain=config.get("grain"))

    def label(self, n: int | None) -> str:
        """The window as a period's name in a result: its name with its parameter (`last_7_days`, `8_days_ago`)."""
        return _PARAMETER.sub(str(n), self.name) if n is not None else self.name

    def previous_of(self, n: int | None) -> tuple[str, int | None] | None:
        """The window before this one with parameter `n`, as (name, its parameter), where it has one."""
        if not self.previous:
            return None
        earlier = self.previous.get("n")
        return self.previous["name"], (int(str(earlier).format(n=n)) if earlier is not None else None)

    def periods(self, grain_hours: int, n: int | None) -> int | None:
        """How many whole periods of `grain_hours` hours the window spans (the last 3 days: 72 hours, 3 days); None
        where its length varies or is no whole number of them."""
        times_n = re.fullmatch(r"(\d+)\s*\*\s*n", self.hours) if isinstance(self.hours, str) else None
        hours = int(times_n[1]) * n if times_n and n else self.hours if isinstance(self.hours, int) else None
        return hours // grain_hours if hours and hours % grain_hours == 0 else None

    def entry(self) -> dict:
        entry = {"name": self.name, "description": self.description}
        if self.parameter:
            entry["parameter"] = self.parameter
        return entry


def query_reading(query: SemanticQuery, spec: ModelSpec, windows: dict[str, WindowSpec], units: dict[str, str]) -> str:
    """One line: the measures with their units, the window, the grouping, the filters, the order and the limit."""
    model_words = spec.name.replace("_", " ")
    measured = []
    share = ("percentage" if query.percent else "fraction") if query.share_of_total or query.share_where else None
    part = " and ".join(_condition(f) for f in query.share_where)
    for name in query.measures:
        field = spec.measures[name]
        label = field.label if model_words.split()[-1] in field.label else f"{field.label} in {model_words}"
        if share:
            label = f"share of {label} where {part}" if part else f"share of the total {label}"
        unit = share or field.unit
        measured.append(f"{label}, {units.get(unit, unit)}" if unit else label)
    dimensions = [spec.dimensions[name].label for name in query.dimensions]
    parts = ["; ".join(measured) if measured else f"{', '.join(dimensions)} of {model_words}"]
    if query.average_per and measured:
        parts[0] += f", averaged per {query.average_per}"
    window = windows.get(query.window.name) if query.window else None
    parts.append("window: " + (window.reading.format(n=query.window.n) if window else "the whole dataset"))
    if query.compared_with_previous and window and (earlier := window.previous_of(query.window.n)):
        name, n = earlier
        parts[-1] += f", against {windows[name].reading.format(n=n)}"
        parts[-1] += (", a row each" if query.compared_with_previous == "rows"
                      else ", side by side with the percentage change")
    if query.dimensions and measured:
        parts.append("grouped by " + ", ".join(dimensions))
    if query.filters:
        parts.append("where " + " and ".join(_condition(f) for f in query.filters))
    if query.running_total and (over := spec.running_over(query.dimensions)):
        parts.append(f"with running totals over {spec.dimensions[over].label}")
    if query.moving_average and (over := spec.moving_over(query.dimensions)):
        parts.append(f"with {query.moving_average}-{over} moving averages")
    if query.order_by:
        parts.append("ordered by " + ", ".join(f"{o.field.replace('_', ' ')} {o.direction}" for o in query.order_by))
    if query.limit:
        parts.append(f"first {query.limit} rows")
    return "; ".join(parts)


def _condition(condition) -> str:
    field = condition.field.replace("_", " ")
    if condition.value is None:
        return f"{field} {condition.op}"
    if isinstance(condition.value, StepRef):
        return f"{field} {condition.op} the result of step {condition.value.step}"
    value = ", ".join(map(str, condition.value)) if isinstance(condition.value, list) else str(condition.value)
    return f"{field} {condition.op} {value}"
