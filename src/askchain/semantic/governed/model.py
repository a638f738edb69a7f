"""The governed semantic model: boring-semantic-layer models loaded from a domain's YAML, with askchain's windows,
views and well-known entities, compiling a semantic query to readable GoogleSQL.

The YAML's top-level keys are boring-semantic-layer models (`from_config`) except askchain's own sections:
`dataset`, `well_known`, `views`, `windows` and `units` (see the Ethereum domain's semantic_model.yaml); a model's
`rows` (what one row is called) is askchain's too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Collection

import ibis
import yaml
from boring_semantic_layer import from_config
from boring_semantic_layer.errors import BSLError
from boring_semantic_layer.safe_eval import safe_eval
from ibis.common.exceptions import IbisError

from askchain.errors import ConfigError, SemanticQueryError, first_line
from askchain.semantic.governed.comparison import compared_with_previous
from askchain.semantic.governed.ordering import ordered_and_limited, sort_keys
from askchain.semantic.governed.part import shares_of_part
from askchain.semantic.governed.plans import compile_plan, is_plan
from askchain.semantic.governed.query import (
    LIST_OPERATORS, NULL_OPERATORS, SemanticQuery, Window, query_schema, validated)
from askchain.semantic.governed.reading import (
    MOVING_PERIODS, TIME_DIMENSIONS, Field, ModelSpec, WindowSpec, query_reading)
from askchain.semantic.governed.sql import readable_sql
from askchain.semantic.governed.steps import StepRef, placeholder
from askchain.semantic.governed.tables import build_views, column_sources, schema_tables

#: Top-level sections of a model file that are askchain's, not boring-semantic-layer models.
OWN_SECTIONS = ("dataset", "well_known", "views", "windows", "units")


@dataclass(frozen=True)
class CompiledQuery:
    """A semantic query as SQL the user can run, one line saying what it measures and how, and the query as
    compiled (after any fit to its question; fraction measures under their own names)."""

    sql: str
    reading: str
    query: SemanticQuery


@dataclass
class SemanticModel:
    """The domain's governed models, their windows and units: a catalog to show, a schema to decode against, and
    the compiler from a semantic query to GoogleSQL."""

    models: dict[str, Any]
    specs: dict[str, ModelSpec]
    windows: dict[str, WindowSpec]
    units: dict[str, str]
    sql_schema: dict = field(repr=False)

    def catalog(self) -> dict:
        """Every model's measures and dimensions (with description, unit, synonyms and well-known values) and the
        windows, for prompts, MCP and the API."""
        return {
            "models": [
                {"name": spec.name, "description": spec.description, "has_time": spec.time is not None,
                 "measures": [f.entry() for f in spec.measures.values()],
                 "dimensions": [f.entry() for f in spec.dimensions.values()]}
                for spec in self.specs.values()
            ],
            "windows": [w.entry() for w in self.windows.values()],
        }

    @cached_property
    def _schema(self) -> dict:
        return query_schema({
            name: {"measures": list(spec.measures), "dimensions": list(spec.dimensions),
                   "windows": {w.name: w.parameter is not None for w in self._windows_of(spec)}}
            for name, spec in self.specs.items()
        })

    def json_schema(self) -> dict:
        """A JSON schema admitting exactly the queries that name existing models, measures, dimensions and windows."""
        return json.loads(json.dumps(self._schema))

    def _windows_of(self, spec: ModelSpec) -> list[WindowSpec]:
        return [w for w in self.windows.values() if spec.time is not None or w.filter is None]

    def compile(self, query: SemanticQuery | dict, steps: Collection[int] = ()) -> CompiledQuery:
        """GoogleSQL for the query and its reading; a query the layer rejects raises SemanticQueryError with the
        reason in one line (for the model's revision). A plan (`{"steps": [...]}`) compiles to one query
        (askchain.semantic.governed.plans); a filter of one of its steps may take the values of the earlier
        `steps` (by number), left a placeholder the plan reads from that step's CTE."""
        if is_plan(query):
            return compile_plan(self, query)
        query = asked = validated(SemanticQuery, query, "query")
        spec = self.specs.get(query.model)
        if spec is None:
            raise SemanticQueryError(f"unknown model '{query.model}'; the models are {', '.join(self.specs)}")
        _reject_a_ranking_without_dimension(query, spec)
        if query.percent:
            query, spec = _in_percent(query, spec), spec.in_percent()
        window = self._window_filter(spec, query)
        filters = [_filter_spec(spec, f, steps) for f in query.filters]
        try:
            if query.compared_with_previous:
                expression = compared_with_previous(self.models[query.model], query, spec,
                                                    self._periods(spec, query, window), filters)
            elif query.share_where:
                expression = shares_of_part(self.models[query.model], query, spec, window + filters,
                                            [_filter_spec(spec, f, ()) for f in query.share_where])
            elif query.moving_average:
                expression = _with_moving_averages(self.models[query.model], query, spec, window, filters,
                                                   self.windows.get(query.window.name) if query.window else None)
            elif query.average_per:
                expression = _averaged_per_period(self.models[query.model], query, spec, window + filters,
                                                  self.windows.get(query.window.name) if query.window else None)
            elif query.share_of_total:
                expression = _as_shares_of_total(self.models[query.model], query, spec, window + filters)
            else:
                expression = _with_running_totals(self.models[query.model].query(
                    dimensions=query.dimensions, measures=query.measures, filters=window + filters,
                    order_by=[(o.field, o.direction) for o in query.order_by] or None, limit=query.limit,
                ).to_untagged(), query, spec)
            sql = ibis.to_sql(expression, dialect="bigquery")
        except (BSLError, IbisError, ValueError, KeyError) as exc:  # the layer's word on the query, for its revision
            raise SemanticQueryError(first_line(exc)) from exc
        sql = readable_sql(sql, self.sql_schema)
        return CompiledQuery(sql, query_reading(query, spec, self.windows, self.units), asked)

    def _periods(self, spec: ModelSpec, query: SemanticQuery, window: list[str]) -> list[tuple[str, str]]:
        """The query's window (its filter `window`) and the one before it as (label, filter), for a comparison."""
        named = self.windows.get(query.window.name) if query.window else None
        earlier = named.previous_of(query.window.n) if named else None
        if earlier is None:
            raise SemanticQueryError(f"window '{query.window.name if query.window else 'none'}' has no period before "
                                     "it to compare with")
        before = query.model_copy(update={"window": Window(name=earlier[0], n=earlier[1])})
        return [(named.label(query.window.n), window[0]),
                (self.windows[earlier[0]].label(earlier[1]), self._window_filter(spec, before)[0])]

    def _window_filter(self, spec: ModelSpec, query: SemanticQuery) -> list[str]:
        """The window as a boring-semantic-layer filter over the model's event time (none for `none`)."""
        if query.window is None:
            return []
        window = self.windows.get(query.window.name)
        if window is None:
            raise SemanticQueryError(f"unknown window '{query.window.name}'; the windows are {', '.join(self.windows)}")
        if window.filter is not None and spec.time is None:
            raise SemanticQueryError(f"model '{spec.name}' has no time column: its only window is 'none'")
        if (window.parameter is None) != (query.window.n is None):
            needs = "takes its parameter n" if window.parameter else "takes no parameter"
            raise SemanticQueryError(f"window '{window.name}' {needs}")
        return [] if window.filter is None else [window.filter.format(time=spec.time, n=query.window.n)]


#: The units of the dimensions a ranking lists: what "the 5 contracts", "the 3 tokens", "the busiest days" name.
RANKED_UNITS = ("address", "text", "hash", "date")


def _reject_a_ranking_without_dimension(query: SemanticQuery, spec: ModelSpec) -> None:
    """A limit of more rows than one over measures and no dimension is one aggregate row, whatever the question
    ranks: the query names the dimension it ranks ("which 5 contracts": the recipient), or none of the rows."""
    if query.limit is None or query.limit < 2 or not query.measures or query.dimensions:
        return
    ranked = [name for name, field in spec.dimensions.items() if field.unit in RANKED_UNITS]
    raise SemanticQueryError(f"a limit of {query.limit} rows over measures and no dimension is one row: group by "
                             f"the dimension the question ranks ({spec.name}: {', '.join(ranked)})")


def _with_running_totals(table, query: SemanticQuery, spec: ModelSpec):
    """The aggregated `table` with each measure's running total beside it, over the query's time dimension and
    within each value of its other dimensions (ibis writes the window), in the query's order or in time order."""
    if not query.running_total:
        return table
    over = spec.running_over(query.dimensions)
    if over is None or not query.measures:
        raise SemanticQueryError("a running total needs a measure and a time dimension to run over (day, week...)")
    window = ibis.cumulative_window(group_by=[table[d] for d in query.dimensions if d != over], order_by=table[over])
    totals = {f"{m}_running_total": table[m].sum().over(window) for m in query.measures}
    order = sort_keys(table, [(o.field, o.direction) for o in query.order_by])
    return table.mutate(**totals).order_by(order or [table[over]])


def moving_average_name(measure: str) -> str:
    """The column of a measure's moving average (`transaction_count`: `transaction_count_moving_average`)."""
    return f"{measure}_moving_average"


def _with_moving_averages(model, query: SemanticQuery, spec: ModelSpec, window: list[str], filters: list,
                          named: WindowSpec | None):
    """Each measure beside its moving average over `query.moving_average` periods of the query's day, week or month,
    within each value of its other dimensions (ibis writes the window of rows). Where the window has a first day, the
    series is aggregated over the window reaching that many periods further back, so that its first rows average as
    many periods as its last, and the rows from the window's first period on are shown."""
    over = spec.moving_over(query.dimensions)
    if over is None or not query.measures:
        raise SemanticQueryError("a moving average needs a measure and a day, week or month dimension to move over")
    if query.running_total or query.average_per or query.share_of_total:
        raise SemanticQueryError("a moving average cannot be asked with a running total, an average per period or a "
                                 "share of the total")
    widened, first = _reaching_back(named, query, spec, over) or (window, None)
    table = model.query(dimensions=query.dimensions, measures=query.measures,
                        filters=widened + filters).to_untagged()
    frame = ibis.window(group_by=[table[d] for d in query.dimensions if d != over], order_by=table[over],
                        preceding=query.moving_average - 1, following=0)
    table = table.mutate(**{moving_average_name(m): table[m].mean().over(frame) for m in query.measures})
    if first is not None:
        table = table.filter(table[over] >= first)
    return ordered_and_limited(table, [(o.field, o.direction) for o in query.order_by] or [(over, "asc")],
                                query.limit)


def _reaching_back(named: WindowSpec | None, query: SemanticQuery, spec: ModelSpec, over: str):
    """The window's filter widened to the periods before its first day that the first row's average reads, and the
    first period the window shows (its first day in the grain of `over`); None where it has no first day (the whole
    table, everything before today)."""
    if named is None or named.filter is None or named.start is None:
        return None
    unit, size = MOVING_PERIODS[over]
    n = query.window.n
    start, within = named.start.format(n=n), named.filter.format(time=spec.time, n=n)
    earlier = size * (query.moving_average - 1)
    widened = (f"({within}) | (({spec.time}.date() >= ({start}) - ibis.interval({unit}={earlier})) "
               f"& ({spec.time}.date() < ({start})))")
    first = safe_eval(start, context={"ibis": ibis}).unwrap()
    return [widened], (first if over == "day" else first.truncate("W" if over == "week" else "M"))


#: Each period a measure is averaged over, from the event time, as the models' own day, week and month dimensions
#: write it.
PERIODS = {"hour": lambda time: time.truncate("h"), "day": lambda time: time.date(),
           "week": lambda time: time.date().truncate("W"), "month": lambda time: time.date().truncate("M")}
#: Each period's length in hours, for the number of periods a fixed window spans (a month's varies: none).
GRAIN_HOURS = {"hour": 1, "day": 24, "week": 168, "month": None}
#: The name the period takes inside the query (never shown: the outer query groups by the asked dimensions only).
PERIOD = "period"


def averaged_name(measure: str, grain: str) -> str:
    """The column of a measure averaged per period (`transaction_count` per hour: `avg_transaction_count_per_hour`)."""
    return f"avg_{measure}_per_{grain}"


def _averaged_per_period(model, query: SemanticQuery, spec: ModelSpec, filters: list, window: WindowSpec | None):
    """Each measure's total over the window divided by the periods the window spans (an hour with no transaction
    counts as none), where the window's length is fixed and no time dimension splits it; otherwise summed or counted
    per period present and averaged over those. Ordered and limited after averaging."""
    if spec.time is None or not query.measures:
        raise SemanticQueryError(f"an average per {query.average_per} needs a measure and a model with a time column")
    if query.running_total:
        raise SemanticQueryError("a running total and an average per period cannot be asked together")
    grain = query.average_per
    named = {m: averaged_name(m, grain) for m in query.measures}
    order = [(named.get(o.field, o.field), o.direction) for o in query.order_by]
    fixed = window is not None and GRAIN_HOURS[grain] and not set(query.dimensions) & TIME_DIMENSIONS
    periods = window.periods(GRAIN_HOURS[grain], query.window.n) if fixed else None
    if periods:  # one aggregate: each measure's own expression over the periods, parsed as BSL parses the YAML's
        per = model.with_measures(**{named[m]: safe_eval(f"({spec.measures[m].expr}) / {periods}",
                                                         context={"_": ibis._}).unwrap() for m in query.measures})
        return per.query(dimensions=query.dimensions, measures=list(named.values()), filters=filters,
                         order_by=order or None, limit=query.limit).to_untagged()
    time = spec.time.removeprefix("_.")
    per = model.with_dimensions(**{PERIOD: lambda table: PERIODS[grain](table[time])}).query(
        dimensions=[*query.dimensions, PERIOD], measures=query.measures, filters=filters).to_untagged()
    averages = {named[m]: per[m].mean() for m in query.measures}  # ibis writes the two levels
    table = per.group_by(query.dimensions).aggregate(**averages) if query.dimensions else per.aggregate(**averages)
    return ordered_and_limited(table, order, query.limit)


def share_name(measure: str, percent: bool) -> str:
    """The column of a measure as each row's share of its total (`block_count`: `block_count_share_of_total`)."""
    return f"{measure}_{'percent' if percent else 'share'}_of_total"


def _as_shares_of_total(model, query: SemanticQuery, spec: ModelSpec, filters: list):
    """Each measure as each row's share of its total over every row found (ibis writes the window), ordered and
    limited after: the top 5 fee recipients' shares are of all blocks, not of the blocks those 5 made."""
    if not query.dimensions or not query.measures:
        raise SemanticQueryError("a share of the total needs a measure and a dimension whose rows share it")
    if query.running_total:
        raise SemanticQueryError("a running total and a share of the total cannot be asked together")
    apart = [m for m in query.measures if not spec.measures[m].adds_up]
    if apart:
        raise SemanticQueryError(f"'{apart[0]}' does not add up over rows (a mean, a share or a distinct count): it "
                                 "has no share of a total")
    table = model.query(dimensions=query.dimensions, measures=query.measures, filters=filters).to_untagged()
    named = {m: share_name(m, query.percent) for m in query.measures}
    shares = {named[m]: (table[m] * 100 if query.percent else table[m]) / table[m].sum().over(ibis.window())
              for m in query.measures}
    order = [(named.get(o.field, o.field), o.direction) for o in query.order_by]
    return ordered_and_limited(table.select(*query.dimensions, **shares), order, query.limit)


def _in_percent(query: SemanticQuery, spec: ModelSpec) -> SemanticQuery:
    """The query with each fraction measure (in its measures, filters and order) replaced by its percentage twin."""
    def named(name: str) -> str:
        return spec.percentages[name].name if name in spec.percentages else name

    return query.model_copy(update={
        "measures": [named(m) for m in query.measures],
        "filters": [f.model_copy(update={"field": named(f.field)}) for f in query.filters],
        "order_by": [o.model_copy(update={"field": named(o.field)}) for o in query.order_by],
    })


def _filter_spec(spec: ModelSpec, condition, steps: Collection[int]) -> dict:
    """A filter in boring-semantic-layer's JSON form, its field one of the model's and its value fitting the
    operator; an earlier step's values as a placeholder the plan replaces."""
    if condition.field not in spec.dimensions and condition.field not in spec.measures:
        raise SemanticQueryError(f"filter on '{condition.field}', which is no dimension or measure of '{spec.name}'")
    if isinstance(condition.value, StepRef):
        return _step_filter(condition, steps)
    if condition.op in NULL_OPERATORS:
        return {"field": condition.field, "operator": condition.op}
    if condition.op in LIST_OPERATORS:
        values = condition.value if isinstance(condition.value, list) else [condition.value]
        return {"field": condition.field, "operator": condition.op, "values": values}
    if condition.value is None or isinstance(condition.value, list):
        raise SemanticQueryError(f"filter '{condition.field} {condition.op}' needs one value")
    return {"field": condition.field, "operator": condition.op, "value": condition.value}


def _step_filter(condition, steps: Collection[int]) -> dict:
    number = condition.value.step
    if number not in steps:
        earlier = ", ".join(map(str, steps)) or "none"
        raise SemanticQueryError(f"filter on '{condition.field}' takes step {number}'s values; the earlier steps: {earlier}")
    if condition.op not in LIST_OPERATORS:
        raise SemanticQueryError(f"filter on '{condition.field}': a step's values take the operator 'in' or 'not in'")
    return {"field": condition.field, "operator": condition.op, "values": [placeholder(number)]}


def load_semantic_model(path: Path, schema_file: Path) -> SemanticModel:
    """The semantic model of a YAML file, its tables built from the dataset's schema file (no connection)."""
    path = Path(path)
    config = yaml.safe_load(path.read_text())
    own = {key: config.pop(key, None) for key in OWN_SECTIONS}
    if not own["dataset"]:
        raise ConfigError(f"{path} names no dataset (its `dataset:`)")
    tables = schema_tables(schema_file, own["dataset"])
    views = build_views(own["views"] or {}, tables)
    known = json.loads((path.parent / own["well_known"]).read_text()) if own["well_known"] else {}
    rows = {name: tuple(cfg.pop("rows", None) or ()) for name, cfg in config.items()}
    specs = {name: replace(_model_spec(name, cfg, known), rows=rows[name],
                           sources=column_sources(cfg.get("table", name), own["views"] or {}, tables))
             for name, cfg in config.items()}
    try:
        models = from_config(_with_percentages(config, specs), tables={**tables, **views})
    except (BSLError, ValueError, KeyError) as exc:
        raise ConfigError(f"{path}: {first_line(exc)}") from exc
    windows = {name: WindowSpec.of(name, cfg) for name, cfg in (own["windows"] or {}).items()}
    unknown = [w.name for w in windows.values() if w.previous and w.previous.get("name") not in windows]
    if unknown:
        raise ConfigError(f"{path}: window '{unknown[0]}' names a `previous:` window that does not exist")
    return SemanticModel(
        models=models,
        specs=specs,
        windows=windows,
        units=own["units"] or {},
        sql_schema=_sql_schema(schema_file, own["dataset"]),
    )


def _model_spec(name: str, config: dict, known: dict) -> ModelSpec:
    dimensions = {key: Field.of(key, cfg, known) for key, cfg in config.get("dimensions", {}).items()}
    times = [cfg["expr"] for cfg in config.get("dimensions", {}).values() if cfg.get("is_event_timestamp")]
    measures = {key: Field.of(key, cfg, known) for key, cfg in config.get("measures", {}).items()}
    return ModelSpec(
        name=name, description=config.get("description", ""), measures=measures,
        dimensions=dimensions, time=times[0] if times else None, percentages=_percentage_twins(measures),
    )


#: A fraction measure's name without the word that says so, to name its twin in percent (failed_share: failed).
_FRACTION_SUFFIX = re.compile(r"_(?:share|fraction)$")


def _percentage_twins(measures: dict[str, Field]) -> dict[str, Field]:
    """Every fraction measure's twin in percent: the model's own measure of that name where it has one
    (failed_share: failed_percentage), else one made here (avg_fullness: avg_fullness_percentage)."""
    twins = {}
    for name, measure in measures.items():
        if measure.unit != "fraction":
            continue
        twin = f"{_FRACTION_SUFFIX.sub('', name)}_percentage"
        if twin in measures and measures[twin].unit == "percentage":
            twins[name] = measures[twin]
            continue
        twin = twin if twin not in measures else f"{name}_percentage"
        twins[name] = Field(name=twin, description=f"{measure.description}, times 100", unit="percentage",
                            label=f"{measure.label} in percent")
    return twins


def _with_percentages(config: dict, specs: dict[str, ModelSpec]) -> dict:
    """The models' YAML with the twins this module makes added as measures (100 times the fraction's expression)."""
    widened = {}
    for name, model in config.items():
        measures = dict(model.get("measures", {}))
        for fraction, twin in specs[name].percentages.items():
            if twin.name not in measures:
                expression = measures[fraction]["expr"] if isinstance(measures[fraction], dict) else measures[fraction]
                measures[twin.name] = {"expr": f"100 * ({expression})", "description": twin.description}
        widened[name] = {**model, "measures": measures}
    return widened


def _sql_schema(schema_file: Path, dataset: str) -> dict:
    """catalog -> dataset -> table -> column -> GoogleSQL type, as sqlglot's qualifier reads it."""
    catalog, _, database = dataset.rpartition(".")
    tables = json.loads(Path(schema_file).read_text())["tables"]
    columns = {name: {c["name"]: c["type"] for c in spec["columns"]} for name, spec in tables.items()}
    return {catalog: {database: columns}} if catalog else {database: columns}
