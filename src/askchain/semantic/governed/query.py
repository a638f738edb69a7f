"""The semantic query form: what a model writes instead of SQL, and the JSON schema that lets it name only what exists.

A query names one semantic model, its measures and dimensions, a named window, filters on dimensions (or, after
aggregation, on measures), an order and a limit:

    {"model": "transactions", "measures": ["failed_share"], "dimensions": ["day"],
     "window": {"name": "last_n_days", "n": 7}, "filters": [], "order_by": [{"field": "day", "direction": "asc"}],
     "limit": null}
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from askchain.errors import SemanticQueryError
from askchain.semantic.governed.steps import StepRef

Operator = Literal["=", "!=", ">", ">=", "<", "<=", "in", "not in", "is null", "is not null"]
OPERATORS: tuple[str, ...] = Operator.__args__
#: Operators that take a list of values, and those that take none.
LIST_OPERATORS = frozenset({"in", "not in"})
NULL_OPERATORS = frozenset({"is null", "is not null"})

Scalar = str | int | float | bool
#: The periods a measure can be averaged over (`average_per`).
Grain = Literal["hour", "day", "week", "month"]


class Window(BaseModel):
    """A named window of the model (its `windows:`), with its parameter where it takes one."""

    model_config = ConfigDict(extra="forbid")
    name: str
    n: int | None = Field(default=None, ge=1)


#: An earlier step's values compared as one value: the same as a list (a step may find one row or several).
_AS_LIST = {"=": "in", "!=": "not in"}


class Filter(BaseModel):
    """A condition on a dimension (before aggregation) or on a measure of the query (after it, as SQL's HAVING)."""

    model_config = ConfigDict(extra="forbid")
    field: str
    op: Operator
    value: Scalar | list[Scalar] | StepRef | None = None

    @model_validator(mode="after")
    def _step_values_as_a_list(self) -> Filter:
        """`= {"step": 1}` is `in {"step": 1}`: equal to the value that step found."""
        if isinstance(self.value, StepRef) and self.op in _AS_LIST:
            self.op = _AS_LIST[self.op]
        return self


class Order(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    direction: Literal["asc", "desc"] = "asc"


class SemanticQuery(BaseModel):
    """One question as the semantic model answers it; `SemanticModel.compile` turns it into GoogleSQL."""

    model_config = ConfigDict(extra="forbid")
    model: str
    measures: list[str] = []
    dimensions: list[str] = []
    window: Window | None = None
    filters: list[Filter] = []
    order_by: list[Order] = []
    limit: int | None = Field(default=None, ge=1)
    #: Fraction measures (0-1) given in percent (0-100), as a question asking for a percentage wants them. Not in the
    #: decoding grammar: askchain.generation.semantic_fit sets it from the question's words; an agent may set it.
    percent: bool = False
    #: Each measure also as its running total over the query's time dimension (`<measure>_running_total`, one run
    #: per value of its other dimensions), as "running total" or "cumulative" asks. Set from the words alike.
    running_total: bool = False
    #: Each measure also as its moving average over this many periods of the query's day, week or month dimension,
    #: the row's own included (`<measure>_moving_average`, within each value of its other dimensions), reading the
    #: periods before the window's first so that every row averages as many, as "7-day moving average" asks. Set from
    #: the words alike.
    moving_average: int | None = Field(default=None, ge=2)
    #: Each measure as its average over the hours (days, weeks, months) of the window: summed or counted per period,
    #: then averaged, as "the average number of transactions per hour" asks. Set from the words alike.
    average_per: Grain | None = None
    #: Each measure as each row's share of its total over every row the query finds, taken before its limit (a
    #: fraction, or a percentage with `percent`), as "what share of all blocks did each of the top 5 fee recipients
    #: produce" asks. Set from the words alike.
    share_of_total: bool = False
    #: The window set against the period of the same length before it (the window's `previous`), as "compared with
    #: the 7 days before" asks: a row per period (`rows`, a `period` column naming each), or each measure over both
    #: side by side with its percentage change (`columns`), as a question asking for the change wants
    #: (askchain.semantic.governed.comparison). Set from the words alike.
    compared_with_previous: Literal["rows", "columns"] | None = None
    #: The part of the rows whose share of each measure is asked, as "what share of ERC-721 transfers were mints"
    #: asks: filters on dimensions, beside the query's own (which keep the whole); each measure becomes the share of it
    #: the part holds (`<measure>_share`, a fraction, or `<measure>_percent` with `percent`)
    #: (askchain.semantic.governed.part). Set from the words alike.
    share_where: list[Filter] = []


def validated(form: type[BaseModel], value, what: str):
    """`value` as `form` (a query or a plan), or SemanticQueryError naming the first thing wrong, in one line."""
    if isinstance(value, form):
        return value
    try:
        return form.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise SemanticQueryError(f"malformed semantic {what}: {where}: {error['msg']}") from exc


#: The keys askchain.generation.semantic_fit sets from the question's words, never the model: outside the grammar.
SET_FROM_WORDS = ("percent", "running_total", "moving_average", "average_per", "share_of_total",
                  "compared_with_previous", "share_where")
#: Of those, the keys that compute per row or per period, each in its own shape: one query takes one of them.
RESHAPING = tuple(key for key in SET_FROM_WORDS if key != "percent")


def reshaped_besides(query: SemanticQuery | dict, key: str | None = None) -> list[str]:
    """The reshaping keys a query (as compiled, or as the model wrote it) sets besides `key`."""
    value = query.get if isinstance(query, dict) else (lambda name: getattr(query, name))
    return [name for name in RESHAPING if name != key and value(name)]


def _names(values: list[str]) -> dict:
    return {"type": "string", "enum": values} if values else {"type": "string", "enum": [""]}


def _window_schema(windows: dict[str, bool]) -> dict:
    """Null, a window without a parameter, or one with its `n`."""
    plain = [name for name, takes_n in windows.items() if not takes_n]
    counted = [name for name, takes_n in windows.items() if takes_n]
    options: list[dict] = [{"type": "null"}]
    if plain:
        options.append({"type": "object", "properties": {"name": _names(plain)}, "required": ["name"],
                        "additionalProperties": False})
    if counted:
        options.append({"type": "object", "properties": {"name": _names(counted), "n": {"type": "integer"}},
                        "required": ["name", "n"], "additionalProperties": False})
    return {"anyOf": options}


VALUE_SCHEMA = {"anyOf": [
    {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
    {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
    {"type": "object", "properties": {"step": {"type": "integer"}}, "required": ["step"], "additionalProperties": False},
]}


#: At most so many items a list of a query holds, in the grammar: greedy decoding of a small model can repeat one name
#: until the token budget runs out, and no question asks for more.
MAX_ITEMS = {"measures": 5, "dimensions": 4, "filters": 5, "order_by": 3}


def model_query_schema(model: str, measures: list[str], dimensions: list[str], windows: dict[str, bool]) -> dict:
    """The object schema of a query on one model: its own names only, keys in the order a query is written."""
    fields = _names(measures + dimensions)
    return {
        "type": "object",
        "properties": {
            "model": {"type": "string", "const": model},
            "measures": {"type": "array", "items": _names(measures), "maxItems": MAX_ITEMS["measures"]},
            "dimensions": {"type": "array", "items": _names(dimensions), "maxItems": MAX_ITEMS["dimensions"]},
            "window": _window_schema(windows),
            "filters": {"type": "array", "maxItems": MAX_ITEMS["filters"], "items": {
                "type": "object",
                "properties": {"field": fields, "op": {"type": "string", "enum": list(OPERATORS)}, "value": VALUE_SCHEMA},
                "required": ["field", "op"], "additionalProperties": False,
            }},
            "order_by": {"type": "array", "maxItems": MAX_ITEMS["order_by"], "items": {
                "type": "object",
                "properties": {"field": fields, "direction": {"type": "string", "enum": ["asc", "desc"]}},
                "required": ["field", "direction"], "additionalProperties": False,
            }},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["model", "measures", "dimensions", "window"],
        "additionalProperties": False,
    }


def query_schema(models: dict[str, dict[str, Any]]) -> dict:
    """A JSON schema admitting a query on any one model: {model: {"measures", "dimensions", "windows"}}."""
    return {"anyOf": [model_query_schema(name, spec["measures"], spec["dimensions"], spec["windows"])
                      for name, spec in models.items()]}
