"""Whether a semantic query answers what its question asks: a small model picks from a long catalog by habit
(distinct senders where the question counts transfers, the highest base fee per timestamp where it lists blocks), and
the compiled SQL then runs to plausible rows that no check of the SQL can fault. Each rule says why it doubts a query:

- one of its measures shares no word with the question (by its name, label or synonyms) while another measure of the
  same model does: the question's own words point elsewhere;
- the question lists so many of the model's rows ("the 5 blocks with", "which 3 transfers") and the query aggregates
  instead of listing the rows' own columns;
- it filters on a field the question names by no word, with a value the question does not write (a year nobody
  asked for, a token flag on a question about NFT contracts);
- its window counts days or hours the question never counts (365 days for "after 1 December");
- its measure counts the distinct values of a dimension it groups by (distinct receivers per receiver: 1 a row).

A doubted lead does not answer alone: askchain.pipeline.stages.draft asks free-SQL samples to confirm its result
(`doubted_lead_confirmation`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from askchain.generation.semantic_fit import RANKS
from askchain.numbers import COUNT, as_digits, question_numbers
from askchain.semantic.governed.naming import (
    ACRONYM_PLURAL, columns_read, counted_conditions, field_phrases, flag_columns, names_phrase, phrase_words, stem)
from askchain.semantic.governed.reading import TIME_DIMENSIONS

if TYPE_CHECKING:
    from askchain.semantic.governed import SemanticModel
    from askchain.semantic.governed.reading import Field, ModelSpec

#: Words that say how a measure aggregates or which unit it is in, not what it measures.
AGGREGATION_WORDS = frozenset({
    "a", "an", "and", "are", "average", "avg", "by", "count", "eth", "gwei", "how", "in", "is", "many", "mean", "much",
    "num", "number", "of", "per", "sum", "the", "to", "total", "with",
})
#: Words that join the words of a name and name nothing alone ("over the gas target": "over" is also a window's).
FUNCTION_WORDS = frozenset({
    "above", "all", "at", "below", "each", "for", "from", "into", "it", "its", "on", "or", "over", "than", "that",
    "their", "under",
})
_NON_NAMING_STEMS = frozenset(stem(word) for word in AGGREGATION_WORDS | FUNCTION_WORDS)


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    text = ACRONYM_PLURAL.sub(r"\1", text)  # NFTs: NFT (the stemmer keeps it)
    return frozenset(stem(word) for word in re.findall(r"[a-z0-9]+", text.lower()))


def naming_words(field: Field) -> frozenset[str]:
    """The words that name a field: of its name, its label and its synonyms, less the aggregation and function
    words."""
    return _naming_words((field.name.replace("_", " "), field.label, *field.synonyms))


@lru_cache(maxsize=4096)
def _naming_words(phrases: tuple[str, ...]) -> frozenset[str]:
    """Cached by the phrases, since a field (its known values are dicts) cannot be a key."""
    return frozenset(word for phrase in phrases for word in words(phrase)) - _NON_NAMING_STEMS


def unnamed_measure(spec: ModelSpec, query: dict, question: str) -> str:
    asked = words(question)
    chosen = [name for name in query.get("measures") or () if name in spec.measures]
    unnamed = [name for name in chosen if not naming_words(spec.measures[name]) & asked]
    named = [name for name, field in spec.measures.items() if name not in chosen and naming_words(field) & asked]
    if not unnamed or not named:
        return ""
    return (f"no word of the question names the measure {', '.join(unnamed)}; its words name "
            f"{', '.join(named[:3])} of {spec.name}")


_COUNT = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twenty)"


def aggregated_listing(spec: ModelSpec, query: dict, question: str) -> str:
    """"Which 5 blocks", "the 3 largest transfers", "top 10 transactions": so many rows, by their plural (a count
    in "ERC-20 contracts" or "3 block builders" names no rows)."""
    if not spec.rows or not query.get("measures"):
        return ""
    nouns = "|".join(re.escape(noun) for noun in spec.rows)
    listed = re.search(rf"\b(?:which|the|top|list|show)\s+{_COUNT}\s+(?:[a-z-]+\s+){{0,2}}?(?:{nouns})e?s\b",
                       question, re.IGNORECASE)
    if listed is None:
        return ""
    return f"the question lists {listed.group(0).split(maxsplit=1)[1]}, rows of {spec.name}; the query aggregates them"


def unnamed_filter(spec: ModelSpec, query: dict, question: str) -> str:
    asked, written = words(question), _flat(question)
    unasked = []
    for condition in query.get("filters") or ():
        field = spec.dimensions.get(condition.get("field")) or spec.measures.get(condition.get("field"))
        values = condition.get("value") if isinstance(condition.get("value"), list) else [condition.get("value")]
        if field is None or any(_written(value, written) for value in values) \
                or (naming_words(field) & asked and not any(map(_is_date, values))):  # a date must be written
            continue
        unasked.append(f"{field.name} {condition.get('op')} {condition.get('value')}")
    return f"the question names no filter {', '.join(unasked)}" if unasked else ""


def _flat(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


_DATE = re.compile(r"(\d{4})-\d{2}-\d{2}")


def _is_date(value) -> bool:
    return isinstance(value, str) and _DATE.match(value) is not None


def _written(value, written: str) -> bool:
    """Whether the question writes the value (an address, a symbol, a number; a date by its year)."""
    if value is None or isinstance(value, (bool, dict)):
        return False
    date = _DATE.match(str(value))
    return bool(_flat(value)) and (date.group(1) if date else _flat(value)) in written


#: The windows that count days or hours, and the counts a period's name stands for ("the past week": 7 days).
COUNTED_WINDOWS = frozenset({"last_n_days", "previous_n_days", "n_days_ago", "last_n_hours"})
PERIOD_DAYS = {"week": 7, "fortnight": 14, "month": 30, "day": 1, "year": 365}
#: A count of weeks ("the past two weeks": 14 days).
_WEEKS = re.compile(rf"\b({COUNT})\s+weeks?\b", re.IGNORECASE)


def uncounted_window(spec: ModelSpec, query: dict, question: str) -> str:
    window = query.get("window") if isinstance(query.get("window"), dict) else {}
    count = window.get("n")
    if window.get("name") not in COUNTED_WINDOWS or count is None:
        return ""
    implied = {days for period, days in PERIOD_DAYS.items() if re.search(rf"\b{period}\b", question, re.I)}
    implied |= {7 * int(as_digits(weeks)) for weeks in _WEEKS.findall(question)}
    if count in question_numbers(question) | implied:
        return ""
    return f"the question counts no {count} in its window {window['name']}"


def without_unnamed_measures(model: SemanticModel, query: dict, question: str) -> dict:
    """`query` without the measures no word of the question names, where it keeps one that is named: an extra
    measure beside the asked one is habit copied from examples (burn per day, and the average gas used beside it).
    A query whose every measure is unnamed is left as written, for `unnamed_measure` to doubt."""
    spec = model.specs.get(query.get("model", ""))
    measures = query.get("measures")
    if spec is None or not isinstance(measures, list):
        return query
    asked = words(question)
    named = [m for m in measures if m not in spec.measures or naming_words(spec.measures[m]) & asked]
    if not named or len(named) == len(measures):
        return query
    return _without(query, "measures", set(measures) - set(named))


def without_unnamed_flags(model: SemanticModel, query: dict, question: str) -> dict:
    """`query` without its filters on a true/false dimension the question never names ("ERC-20", "minted",
    "top-level"): a flag nobody asked for (contracts that are ERC-20, transfers that are mints) is habit copied from
    examples. Named means written as a phrase (askchain.semantic.governed.naming)."""
    asked = phrase_words(question)

    def kept(spec: ModelSpec, condition: dict) -> dict | None:
        field = spec.dimensions.get(condition["field"])
        unnamed = field is not None and field.unit == "boolean" and not names_phrase(field_phrases(field), asked)
        return None if unnamed else condition

    return _with_filters(model, query, kept)


def without_counts_of_unnamed_flags(model: SemanticModel, query: dict, question: str) -> dict:
    """`query` without the measures counting rows by a flag the question never names, where another measure stays:
    the failed percentage beside the transactions counted by type, for "what percentage of transactions used each
    type", is habit copied from examples. Named means the measure itself, or any field reading its flag ("failed",
    "status"), written as a phrase (askchain.semantic.governed.naming)."""
    spec = model.specs.get(query.get("model", ""))
    measures = query.get("measures")
    if spec is None or not isinstance(measures, list):
        return query
    asked, flags = phrase_words(question), flag_columns(model)

    def unnamed(measure: Field) -> bool:
        counted = {spec.sources.get(c) for c in columns_read(counted_conditions(measure.expr))} & flags.keys()
        return bool(counted) and not names_phrase(field_phrases(measure), asked) \
            and not any(names_phrase(flags[column].phrases, asked) for column in counted)

    known = {m for m in measures if isinstance(m, str) and m in spec.measures}
    dropped = {m for m in known if unnamed(spec.measures[m])}
    return _without(query, "measures", dropped) if dropped and len(dropped) < len(known) else query


def without_unnamed_dimensions(model: SemanticModel, query: dict, question: str) -> dict:
    """`query` without the dimensions it splits by that the question never names as a phrase ("how many calls
    failed" split by call type), where it measures something (a listing's dimensions are what it lists) and ranks
    nothing (a top N or a ranking is split by what it ranks), whatever the question calls them. Time splits are
    `total_unless_a_series_is_asked`'s."""
    spec = model.specs.get(query.get("model", ""))
    dimensions = query.get("dimensions")
    if spec is None or not isinstance(dimensions, list) or not query.get("measures") or query.get("limit") \
            or query.get("order_by") and RANKS.search(question):
        return query
    asked = phrase_words(question)
    unnamed = {d for d in dimensions if isinstance(d, str) and d in spec.dimensions and d not in TIME_DIMENSIONS
               and not names_phrase(field_phrases(spec.dimensions[d]), asked)}
    return _without(query, "dimensions", unnamed) if unnamed else query


def without_filters_a_share_counts(model: SemanticModel, query: dict) -> dict:
    """`query` without its filters on a column every one of its measures counts a share of: the failed share of
    failed calls is 1 on every row, so "what share of calls failed (status 0)" wants the share, not the filter its
    words also name. A count or a ratio beside the share keeps the filter."""
    spec = model.specs.get(query.get("model", ""))
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    shares = [_share_columns(spec.measures[m]) if spec and isinstance(m, str) and m in spec.measures else set()
              for m in measures]
    counted = set.intersection(*shares) if shares else set()

    def kept(spec: ModelSpec, condition: dict) -> dict | None:
        field = spec.dimensions.get(condition["field"])
        return None if field is not None and counted & set(columns_read(field.expr)) else condition

    return _with_filters(model, query, kept) if counted else query


def _share_columns(measure: Field) -> set[str]:
    """The columns a share measure's condition reads; none for a measure that is no share of counted rows."""
    if measure.unit != "fraction":
        return set()
    return set(columns_read(counted_conditions(measure.expr)))


def without_values_no_row_has(model: SemanticModel, query: dict) -> dict:
    """`query` without its filters on a value its dimension never takes (trace_type = 'top_level' for the top-level
    call, which a governed filter expresses): such a filter finds no row, and the words behind it name a filter of
    their own (askchain.semantic.layer.named_filters). A value written in another case is the declared one."""

    def kept(spec: ModelSpec, condition: dict) -> dict | None:
        field, value = spec.dimensions.get(condition["field"]), condition.get("value")
        values = value if isinstance(value, list) else [value]
        if field is None or not field.values or condition.get("op") not in ("=", "in") \
                or not all(isinstance(v, str) for v in values):
            return condition
        declared = {v.lower(): v for v in field.values}
        taken = [declared[v.lower()] for v in values if v.lower() in declared]
        if not taken:
            return None
        return {**condition, "value": taken if isinstance(value, list) else taken[0]}

    return _with_filters(model, query, kept)


def _with_filters(model: SemanticModel, query: dict, kept: Callable[[ModelSpec, dict], dict | None]) -> dict:
    """`query` with each filter on a named field as `kept` gives it back (None: dropped); a filter on no field name
    (the model's JSON is not checked yet) is left for the layer to reject."""
    spec = model.specs.get(query.get("model", ""))
    filters = query.get("filters")
    if spec is None or not isinstance(filters, list):
        return query
    fitted = [f if not (isinstance(f, dict) and isinstance(f.get("field"), str)) else kept(spec, f) for f in filters]
    fitted = [f for f in fitted if f is not None]
    return query if fitted == filters else {**query, "filters": fitted}


def _without(query: dict, key: str, dropped: set[str]) -> dict:
    """`query` without the `dropped` fields, in its `key` (measures or dimensions) and its ordering alike."""
    order = [o for o in query.get("order_by") or [] if not isinstance(o, dict) or o.get("field") not in dropped]
    return {**query, key: [name for name in query[key] if name not in dropped],
            **({"order_by": order} if "order_by" in query else {})}


#: A measure counting one column's distinct values (`_.token_address.nunique()`): the column's expression.
_DISTINCT_COUNT = re.compile(r"^\s*(?P<column>_\.\w+)\.nunique\(\)\s*$")


def grouped_counts(spec: ModelSpec, query: dict) -> set[str]:
    """The measures of `query` that count the distinct values of a dimension it groups by: 1 on every row."""
    measures, dimensions = query.get("measures"), query.get("dimensions")
    if not isinstance(measures, list) or not isinstance(dimensions, list):
        return set()
    grouped = {spec.dimensions[d].expr.strip() for d in dimensions if d in spec.dimensions}
    return {m for m in measures if m in spec.measures
            and (match := _DISTINCT_COUNT.match(spec.measures[m].expr)) and match["column"] in grouped}


def without_grouped_counts(model: SemanticModel, query: dict) -> dict:
    """`query` without its grouped counts where another measure stays: "top tokens by transfers" names tokens, and
    distinct tokens per token is 1 on every row. Where they are its only measures, it loses the dimensions they count
    instead, if another stays: "senders by distinct receivers" grouped by sender and receiver counts receivers per
    sender. A query grouped by nothing but what it counts is left to `counts_its_own_group`."""
    spec = model.specs.get(query.get("model", ""))
    counted = grouped_counts(spec, query) if spec else set()
    if not counted:
        return query
    if len(counted) < len(query["measures"]):
        return _without(query, "measures", counted)
    columns = {_DISTINCT_COUNT.match(spec.measures[m].expr)["column"] for m in counted}
    dropped = {d for d in query["dimensions"] if d in spec.dimensions and spec.dimensions[d].expr.strip() in columns}
    return query if len(dropped) == len(query["dimensions"]) else _without(query, "dimensions", dropped)


def counts_its_own_group(spec: ModelSpec, query: dict, question: str) -> str:
    """A query whose measures count what it groups by answers nothing (1 on every row): another dimension was meant."""
    counted = sorted(grouped_counts(spec, query))
    return f"{', '.join(counted)} is 1 on every row of a query grouped by what it counts" if counted else ""


#: The rules, each (model spec, query, question) -> why it doubts the query, or "".
RULES: tuple[Callable[[ModelSpec, dict, str], str], ...] = (
    unnamed_measure, aggregated_listing, unnamed_filter, uncounted_window, counts_its_own_group)


def reason_to_doubt(model: SemanticModel, query: dict, question: str) -> str:
    """Why `query` (a semantic query as a dict) may not answer `question`: the rules' reasons, or ""."""
    spec = model.specs.get(query.get("model", ""))
    if spec is None:
        return ""
    return "; ".join(reason for rule in RULES if (reason := rule(spec, query, question)))
