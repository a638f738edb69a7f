"""A semantic query fitted to its question's words: parts a small model adds by habit, copying its examples, that the
question never asks for. Each rule is one function over the query (a dict as the model wrote it) and the question.

- A time dimension (a day, an hour, a week...) splits a total into a series; it stays only when the question asks
  for one ("per day", "each of the last 7 days", "daily", "which day", "the 3 days with", "compare", "when"), else
  the query is the window's total.
- A limit of more rows than one that the question never writes, where it leaves no count to the answer ("the top
  tokens"), is dropped: the question asks for every row (as `askchain.pipeline.limits` does for SQL).
- A window where the question names no time or period at all is dropped: it asks about the whole table.
- A series over time is ordered by its time, unless the question ranks it ("the busiest days", "the top 3 days").
- A limit of one row is dropped where the query has no dimension (its one aggregate row needs none) or the
  question ranks nothing ("per day over the last 7 days" is every day, not the first).
- A question asking for a percentage gets its fraction measures in percent (0-100; the layer's twin of each).
- A filter equal to the word null ("symbol = 'null'") asks for no value: it is `is null` (`!=`: `is not null`).
- Two filters equal to different values of one field ("type = 0" and "type = 2") match no row together: the
  question names both values, so the field is in either.
- One aggregate row over the values an `in` filter lists is a row per value where the question asks for each
  ("of each", "respectively", "compare"): the filter's field is grouped.
- A question naming one period ("yesterday", "the past fortnight") gets that period's window (`in_the_window_named`,
  which takes the window besides the question and is applied by askchain.generation.semantic).
- In a plan whose steps have windows of their own (the top of 30 days, then each of the last 7), a step's window
  the question never states (`window_stated`) takes the one window it names, as a single query's does.
- A question naming a governed filter ("successful transactions" are status 1) gets it, unless the query reads that
  dimension already (`with_the_filters_named`, applied alike).
- A question asking for a running total ("cumulative", "running total") of a series over time gets its measures'
  running totals (`running_total_when_asked`, applied alike: it reads the model's time dimensions).
- A question asking for a moving average of a given length ("7-day moving average") of a series by day, week or
  month gets its measures' moving averages (`moving_average_when_asked`, applied alike).
- A question asking for an average per hour (day, week, month) of what a measure sums or counts gets the measure
  averaged over the window's periods (`averaged_per_period_when_asked`, applied alike: it reads the measures).
- A question asking for a share of something ("what share of all blocks", "the percentage of transactions") whose
  query counts or sums by a dimension other than time gets each row's share of the total, without the means picked
  beside (`share_of_total_when_asked`, applied alike: it reads the measures).
- A question setting the one period it names against the period of the same length before it ("compared with the 7
  days before") whose query aggregates over no time dimension gets that period compared with the one before: a row
  each, or side by side with the percentage change where it asks for the change (`compared_with_previous_when_asked`,
  applied alike: it reads the model's windows).
- In a plan, a later step grouped only by the one value an earlier step found (the top address) is one row; where
  the question asks for days ("on each of the last 7 days", "per day") and no step splits by time, it is split by
  day instead (`a_series_of_what_was_found`, applied to the plan by askchain.generation.semantic).
- In a plan, a later step taking the values of an earlier step's rows answers for each of them, unless the question
  asks for them together ("how much did they send together", "combined") and never for each: then the step is not
  grouped by those values and answers with their one total (`together_when_asked`, applied alike).
- In a plan that ranks a few rows first and then asks about them, the first step answers the question's first clause
  and the later steps the clauses after it (`step_questions`, read by askchain.generation.semantic, which fits each
  step to its own words and takes the window from the whole question).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from askchain.pipeline.limits import SOME_ROWS, question_numbers
from askchain.semantic.governed.naming import columns_read, field_phrases, names_phrase, phrase_words
from askchain.semantic.governed.query import reshaped_besides
from askchain.semantic.governed.reading import TIME_DIMENSIONS

if TYPE_CHECKING:
    from askchain.semantic.governed.reading import ModelSpec, WindowSpec

#: Words that ask for a result split by time, or for a time itself.
ASKS_FOR_TIME = re.compile(
    r"\b(?:per|each|every|by|a|which|what|busiest|quietest)[\s-]+(?:single\s+)?(?:day|date|hour|week|month|weekday|year)"
    r"|\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:days|hours|weeks|months)\s+(?:of|with|had|when)\b"
    r"|\bcompare\b|\bthe (?:day|hour|week|month) before\b|\b(?:day|month|week|year) before it\b"
    r"|\b(?:daily|hourly|weekly|monthly|when|timestamps?|time|dates?|trend|series|over time|day[- ]by[- ]day)\b"
    # "times" as a listing's column ("their numbers and times"), not a product ("gas used times gas price") or a count
    r"|(?<!many\s)(?<!\d\s)\btimes\b(?=\s*(?:[,.;:?)]|$|and\b|of\b|when\b|at\b))"
    r"|\beach of the\b|\bday of (?:the )?(?:week|year)\b|\bhour of (?:the )?day\b|\bdays? of the week\b"
    r"|\b(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|weekends?|weekdays?)\b",
    re.IGNORECASE,
)


def total_unless_a_series_is_asked(query: dict, question: str) -> dict:
    dimensions = query.get("dimensions") or []
    if ASKS_FOR_TIME.search(question) or not set(dimensions) & TIME_DIMENSIONS or _ranks_periods(query, question):
        return query
    kept = [d for d in dimensions if d not in TIME_DIMENSIONS]
    order = [o for o in query.get("order_by") or [] if isinstance(o, dict) and o.get("field") not in TIME_DIMENSIONS]
    return {**query, "dimensions": kept, **({"order_by": order} if "order_by" in query else {})}


#: Words ranking periods ("the top 5 days", "which 3 hours", "the busiest weeks"), not what happened in them.
RANKS_PERIODS = re.compile(r"\b(?:which|top|the|busiest|quietest)\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten)?"
                           r"\s*(?:\w+est\s+)?(?:days|hours|weeks|months)\b(?!\s+(?:before|prior|up|until|ending)\b)",
                           re.IGNORECASE)


def _ranks_periods(query: dict, question: str) -> bool:
    """Whether the query ranks periods and nothing else, as the question does ("the top 5 days by burn"): a limit of
    several rows over time dimensions only."""
    dimensions, limit = query.get("dimensions") or [], query.get("limit")
    return isinstance(limit, int) and limit > 1 and set(dimensions) <= TIME_DIMENSIONS \
        and bool(RANKS_PERIODS.search(question))


def every_row_unless_a_count_is_asked(query: dict, question: str) -> dict:
    limit = query.get("limit")
    if not isinstance(limit, int) or limit <= 1 or SOME_ROWS.search(question) or limit in question_numbers(question):
        return query
    return {**query, "limit": None}


#: Words that name a time or a period: without any, the question asks about the whole table.
NAMES_A_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|last|past|previous|prior|this|since|after|before|until|during|between|ago|recent"
    r"|recently|so far|latest|current|days?|weeks?|months?|years?|hours?|minutes?|daily|weekly|monthly|hourly|\d{4}"
    r"|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:tember)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\b",
    re.IGNORECASE,
)


def whole_table_unless_a_time_is_named(query: dict, question: str) -> dict:
    window = query.get("window")
    if not isinstance(window, dict) or window.get("name") == "none" or NAMES_A_TIME.search(question):
        return query
    return {**query, "window": None}


#: Words that rank or order rows ("the busiest days", "newest first", "fewest transactions").
RANKS = re.compile(r"\b(?:\w{3,}est|most|least|top|first|rank\w*|order\w*|sort\w*)\b", re.IGNORECASE)


def series_in_time_order(query: dict, question: str) -> dict:
    """A series of measures over time (no limit) is listed in time order unless the question ranks or orders it."""
    times = [d for d in query.get("dimensions") or [] if d in TIME_DIMENSIONS]
    if not times or not query.get("measures") or query.get("limit") or RANKS.search(question) \
            or not ASKS_FOR_TIME.search(question):
        return query
    return {**query, "order_by": [{"field": times[0], "direction": "asc"}]}


def one_row_only_when_ranked(query: dict, question: str) -> dict:
    """LIMIT 1 on one aggregate row (habit copied from ranked examples) or on a series the question does not rank."""
    if query.get("limit") != 1 or (query.get("dimensions") and RANKS.search(question)):
        return query
    return {**query, "limit": None, **({} if query.get("dimensions") else {"order_by": []})}


#: Words asking for a percentage (0-100), and words asking for a fraction (0-1), which take precedence.
ASKS_FOR_PERCENT = re.compile(r"\bper\s?cent(?:age)?s?\b|%|\b0\s*(?:-|to)\s*100\b", re.IGNORECASE)
ASKS_FOR_FRACTION = re.compile(r"\bfractions?\b|\bbetween 0 and 1\b|\b0\s*(?:-|to)\s*1\b(?![\d.])", re.IGNORECASE)


def percent_when_a_percentage_is_asked(query: dict, question: str) -> dict:
    if not ASKS_FOR_PERCENT.search(question) or ASKS_FOR_FRACTION.search(question):
        return query
    return {**query, "percent": True}


def in_the_window_named(query: dict, window: dict | None) -> dict:
    """The window the question's own words name (askchain.semantic.layer.named_window: "the past fortnight" is the
    last 14 days), in place of one the model picked by habit (last month, 28 days); a query without a window takes
    it unless it filters on a time itself. `window` is None for a question naming no one period, or a model without
    an event time."""
    if not window or (current := query.get("window")) == window:
        return query
    has_window = isinstance(current, dict) and current.get("name") not in (None, "none")
    filters_a_time = any(isinstance(f, dict) and f.get("field") in TIME_DIMENSIONS for f in query.get("filters") or ())
    return query if filters_a_time and not has_window else {**query, "window": dict(window)}


def window_stated(window: dict | None, question: str) -> bool:
    """Whether the question's words state a window a query picked: its length (the 7 of "the last 7 days", in digits
    or words; one of a unit goes without a number: "the previous week") or, for a window of no length, its name
    ("yesterday", "this week"). In a plan whose steps have windows of their own, a step's window the question never
    states is the model's habit (yesterday, copied from an example), and takes the one window the question names.
    No window states nothing to replace."""
    if not isinstance(window, dict) or window.get("name") in (None, "none"):
        return True
    if "n" in window:
        try:
            length = float(window["n"])
        except (TypeError, ValueError):
            return True  # malformed: the layer says what is wrong with it
        return length == 1 or length in question_numbers(question)
    name = str(window["name"]).replace("_", " ")
    return re.search(rf"\b{re.escape(name)}\b", question, re.IGNORECASE) is not None


def with_the_filters_named(query: dict, filters: Sequence[dict], spec: ModelSpec) -> dict:
    """The governed filters the question's words name (askchain.semantic.layer.named_filters: "successful" is status
    1, "USDC" the token's symbol), added where the query's model has the filtered dimension and the query does not
    read it already: a filter, a grouping or a measure on it ("failed share" counts the failed ones itself; a filter
    would make it 1), or a filter naming the same well-known entity by another field (USDC by its address). A
    grouping by a well-known entity's field labels the one the question names and takes its filter."""
    written = _filters(query)
    grouped = set(query.get("dimensions") or ()) if isinstance(query.get("dimensions"), list) else set()
    measures = [spec.measures[m] for m in query.get("measures") or () if isinstance(m, str) and m in spec.measures]
    taken = [dict(f) for f in filters if f["field"] in spec.dimensions
             and (f["field"] not in grouped or _entity(spec, f) is not None)
             and all(not isinstance(w, dict) or w.get("field") != f["field"] for w in written)
             and not _names_the_same_entity(spec, written, f)
             and not set(columns_read(spec.dimensions[f["field"]].expr)) & {
                 column for m in measures for column in columns_read(m.expr)}]
    return {**query, "filters": [*written, *taken]} if taken else query


def _names_the_same_entity(spec: ModelSpec, written: list, governed: dict) -> bool:
    """Whether a written filter names the well-known entity the governed one does by another field (USDT by its
    address where the governed filter names it by its symbol)."""
    name = _entity(spec, governed)
    return name is not None and any(_entity(spec, w) == name for w in written)


def _entity(spec: ModelSpec, condition) -> str | None:
    """The name of the well-known entity a filter keeps (USDC for its symbol or its address), if it keeps one."""
    field = spec.dimensions.get(condition.get("field")) if isinstance(condition, dict) else None
    if field is None:
        return None
    value = str(condition.get("value")).lower()
    return next((known["name"] for known in field.known_values if known["value"].lower() == value), None)


#: Words asking for a running total.
ASKS_FOR_RUNNING_TOTAL = re.compile(r"\brunning\s+(?:total|sum|count)s?\b|\bcumulative(?:ly)?\b|\baccumulated\b",
                                    re.IGNORECASE)


def running_total_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """Running totals where the question asks for them and the query is a series over time they can run over."""
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    if not (ASKS_FOR_RUNNING_TOTAL.search(question) and query.get("measures") and spec.running_over(dimensions)):
        return query
    return {**query, "running_total": True}


_PERIOD = r"(\d+)[- ](?:day|hour|week|month|block)s?[- ]"
#: Words asking for a moving average, with its length where they give one ("7-day moving average"; "rolling mean"
#: gives none).
ASKS_FOR_MOVING_AVERAGE = re.compile(
    rf"\b(?:{_PERIOD})?(?:moving|rolling|trailing)[- ](?:{_PERIOD})?(?:average|mean|avg)s?\b", re.IGNORECASE)


def moving_average_asked(question: str) -> int | None:
    """The length of the moving average the question asks for: None where it asks for none, 0 where it gives none."""
    asked = ASKS_FOR_MOVING_AVERAGE.search(question)
    return int(asked.group(1) or asked.group(2) or 0) if asked else None


def moving_average_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """A moving average of the length the question gives, where the query is a series by day, week or month."""
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    periods = moving_average_asked(question) or 0
    if periods < 2 or not query.get("measures") or spec.moving_over(dimensions) is None:
        return query
    return {**query, "moving_average": periods}


#: Words asking for a measure's average over the hours (days, weeks, months) of a window: "the average number of
#: transactions per hour", "average daily burn", "blocks a day on average", "in an average week". No "per" between
#: the average and its period ("average transactions per block per day" averages per block).
ASKS_FOR_AVERAGE_PER = re.compile(
    r"\b(?:average|mean|typical)\b(?:(?!\bper\b)[^.?;]){0,60}?\b(?:per|an?)\s+(hour|day|week|month)\b"
    r"|\b(?:average|mean|typical)\s+(hourly|daily|weekly|monthly)\b|\b(hourly|daily|weekly|monthly)\s+(?:average|mean)\b"
    r"|\b(?:per|an?)\s+(hour|day|week|month)\s+on\s+average\b|\ban\s+average\s+(hour|day|week|month)\b",
    re.IGNORECASE)
#: Each period named by its adverb.
GRAIN_OF = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
#: Words asking for a series of the periods ("the average ... for each day", "each of the last 7 days"): one figure
#: per period, which an average over those periods would not give.
ASKS_FOR_EACH_PERIOD = re.compile(r"\b(?:each|every)\s+(?:single\s+)?(hour|day|week|month)\b"
                                  r"(?!\s+of\s+(?:the\s+)?(?:week|day)\b)"
                                  r"|\beach\s+of\s+the\s+(?:(?:last|past|previous)\s+)?(?:\w+\s+)?(hour|day|week|month)s\b"
                                  r"|\b(day)[- ]by[- ]day\b", re.IGNORECASE)


def periods_each_asked(question: str) -> set[str]:
    """The periods the question asks for each of ("each hour", "each of the last 7 days", "day by day")."""
    return {g.lower() for found in ASKS_FOR_EACH_PERIOD.finditer(question) for g in found.groups() if g}


#: A measure that only sums or counts, whose totals per period can be averaged; a mean, an extreme or a ratio cannot.
SUMS_OR_COUNTS = frozenset({"sum", "count", "nunique"})
#: The series dimension each period splits by already (its own averaging would change nothing).
PERIOD_DIMENSIONS = {"hour": "hour_of_day", "day": "day", "week": "week", "month": "month"}
ASKS_FOR_HOUR_OF_DAY = re.compile(r"\bhours?\s+of\s+(?:the\s+)?day\b", re.IGNORECASE)


def averaged_per_period_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """Measures that sum or count, averaged over the periods of the window where the question asks for an average
    per hour (day, week, month) and no series of periods; the dimension of that period, which the average runs over,
    dropped (the hour of the day only where the question does not name it). "Average" draws a small model to a mean
    measure the question never names (the average gas price for "the average number of transactions per hour"):
    where each measure picked is such a mean and the question names one measure that sums or counts, by a phrase of
    its own, that measure is averaged instead."""
    asked = ASKS_FOR_AVERAGE_PER.search(question)
    grain = next(GRAIN_OF.get(g.lower(), g.lower()) for g in asked.groups() if g) if asked else None
    each = periods_each_asked(question)
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    if grain is None or grain in each or query.get("running_total") or spec.time is None or not measures:
        return query
    if not all(_sums_or_counts(spec, m) for m in measures):
        measures = _named_sum_or_count(spec, measures, phrase_words(question))
        if not measures:
            return query
    period = PERIOD_DIMENSIONS[grain]
    dropped = {"block_time", period} - ({period} if ASKS_FOR_HOUR_OF_DAY.search(question) and grain == "hour" else set())
    dimensions = [d for d in query.get("dimensions") or [] if d not in dropped]
    order = [o for o in query.get("order_by") or [] if not (isinstance(o, dict) and (
        o.get("field") in dropped or o.get("field") in spec.measures and o.get("field") not in measures))]
    return {**query, "measures": measures, "dimensions": dimensions, "order_by": order, "average_per": grain}


def _named_sum_or_count(spec: ModelSpec, picked: list, asked: tuple[str, ...]) -> list[str]:
    """The one measure of `spec` that sums or counts and that the question's words `asked` name, where no measure
    `picked` is named by them; none otherwise."""
    def named(measure: str) -> bool:
        return measure in spec.measures and names_phrase(field_phrases(spec.measures[measure]), asked)

    if any(isinstance(m, str) and named(m) for m in picked):
        return []
    found = [m for m in spec.measures if _sums_or_counts(spec, m) and named(m)]
    return found if len(found) == 1 else []


def _sums_or_counts(spec: ModelSpec, measure: str) -> bool:
    field = spec.measures.get(measure) if isinstance(measure, str) else None
    return field is not None and field.aggregates_only(SUMS_OR_COUNTS)


#: Words asking for a share of something ("what share of all blocks", "the percentage of transactions", "% of").
ASKS_FOR_SHARE = re.compile(r"(?:\b(?:share|proportion|portion|fraction|per\s?cent(?:age)?)|%)(?:\s*\([^)]{0,12}\))?\s+of\b",
                            re.IGNORECASE)


def ordered_instead(order_by, dropped: set[str], chosen: str) -> list:
    """`order_by` ordering by `chosen` where it ordered by one of the `dropped` fields, each key once."""
    order: list = []
    for item in order_by:
        if isinstance(item, dict) and item.get("field") in dropped:
            item = {**item, "field": chosen}
        if item not in order:
            order.append(item)
    return order


def share_of_total_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """Each row's share of the total where the question asks for a share of something and the query splits what it
    counts or sums by a dimension other than time ("what percentage of transactions used each type": the count by
    type, as a share of all). A mean or an extreme picked beside it (the average gas used beside the blocks counted)
    has no share of a total and is habit: it goes, and an order by it ranks by the first count or sum instead. A
    share measure (the failed share of each type's transactions) is the row's own fraction, and a series over time
    ("the share of transactions that failed each day") each period's own: those queries stay as they are."""
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    if not (ASKS_FOR_SHARE.search(question) and measures and dimensions) or query.get("average_per") \
            or query.get("running_total") or set(dimensions) & TIME_DIMENSIONS:
        return query
    fields = [spec.measures.get(m) if isinstance(m, str) else None for m in measures]
    if any(f is None or f.is_share for f in fields):
        return query
    kept = [m for m, f in zip(measures, fields) if f.adds_up]
    if not kept:
        return query
    order = ordered_instead(query.get("order_by") or [], set(measures) - set(kept), kept[0])
    ranked = {"order_by": order} if "order_by" in query else {}
    return {**query, "measures": kept, **ranked, "share_of_total": True}


#: Words setting a period against the one of the same length before it: "the 7 days before", "the week before it",
#: "compared with the previous 30 days", "week over week"; not "the 7 days before today", which is one window.
ASKS_FOR_PREVIOUS_PERIOD = re.compile(
    r"\b(?:days?|weeks?|months?|period)\s+(?:before|earlier|prior)\b(?!\s+(?:today|now)\b)"
    r"|\b(?:week|month)[- ]over[- ](?:week|month)\b"
    r"|\b(?:compared?\s+(?:with|to)|versus|vs\.?|than)\s+(?:in\s+)?the\s+(?:previous|prior|preceding)\s+"
    r"(?:\w+\s+)?(?:days?|weeks?|months?|period)\b", re.IGNORECASE)
#: Words setting a period against another of a different length: "the same weekday a week before" is one day.
SAME_PERIOD_EARLIER = re.compile(r"\bsame\s+(?:\w+\s+)?(?:day|weekday|hour|time|period)\b", re.IGNORECASE)
#: Words asking how much a figure changed from one period to the next: its percentage change beside both.
ASKS_FOR_CHANGE = re.compile(r"\b(?:chang(?:e[sd]?|ing)|increas(?:e[sd]?|ing)|decreas(?:e[sd]?|ing)|grow(?:th|n)?|grew"
                             r"|rose|fell|drop(?:ped)?|differ(?:ence|ent)?)\b", re.IGNORECASE)


def compares_with_previous(question: str, window: dict | None, windows: Mapping[str, WindowSpec]) -> bool:
    """Whether the question sets the one window it names (`window`) against the period of the same length before it,
    which the model's `windows` declare."""
    named = windows.get(window.get("name", "")) if isinstance(window, dict) else None
    return bool(named and named.previous and ASKS_FOR_PREVIOUS_PERIOD.search(question)
                and not SAME_PERIOD_EARLIER.search(question))


#: The words of a comparison of two periods, which ask for no series over time of their own ("compared with", "the
#: week before it", "in each of the two periods").
_COMPARISON_WORDS = re.compile(
    ASKS_FOR_PREVIOUS_PERIOD.pattern + r"|\bcompar\w*(?:\s+(?:with|to|against))?|\b(?:versus|vs\.?|against)\b"
    r"|\b(?:each|both)\s+of\s+the\s+(?:two|2)\s+\w+|\bboth\s+(?:periods|weeks|months|days)\b", re.IGNORECASE)


def compared_with_previous_when_asked(query: dict, question: str, window: dict | None,
                                      windows: Mapping[str, WindowSpec]) -> dict:
    """The one window a question setting it against the period before it names (`window`, askchain.semantic.layer
    .compared_window: "the last 7 days compared with the 7 days before" names the last 7 days), compared with that
    period: a row per period, or both side by side with the percentage change where the question asks how much the
    figure changed. A split by time the question asks for only in its comparison's words (a day of the last 7 days
    "compared", "in each of the two periods") goes; a split by the window's own calendar period (a row per week of
    the last 2 weeks) shows both periods already, and one the question asks for otherwise is a series: the query
    stays as it is."""
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    if not (measures and compares_with_previous(question, window, windows)) \
            or reshaped_besides(query, "compared_with_previous"):
        return query
    split = set(dimensions) & TIME_DIMENSIONS
    asked_apart = ASKS_FOR_TIME.search(_COMPARISON_WORDS.sub(" ", question))
    if split and (windows[window["name"]].grain in split or asked_apart):
        return query
    order = [o for o in query.get("order_by") or [] if not (isinstance(o, dict) and o.get("field") in split)]
    shape = "columns" if ASKS_FOR_CHANGE.search(question) or query.get("limit") else "rows"
    unsplit = {"dimensions": [d for d in dimensions if d not in split], "order_by": order} if split else {}
    return {**query, **unsplit, "window": dict(window), "compared_with_previous": shape}


#: What a model writes for "no value" as if it were one.
NULL_WORDS = frozenset({"null", "none", "nil"})
#: The operator each comparison with no value stands for.
NULL_TESTS = {"=": "is null", "!=": "is not null"}


def _filters(query: dict) -> list:
    return query.get("filters") if isinstance(query.get("filters"), list) else []


def no_value_as_null(query: dict, question: str) -> dict:
    """`symbol = 'null'` (or = null) is `symbol is null`: a token without a symbol has none, not the word."""
    filters = [_as_null_test(f) for f in _filters(query)]
    return {**query, "filters": filters} if filters != _filters(query) else query


def _as_null_test(condition):
    if not isinstance(condition, dict) or condition.get("op") not in NULL_TESTS:
        return condition
    value = condition.get("value")
    if value is None or (isinstance(value, str) and value.strip().lower() in NULL_WORDS):
        return {"field": condition.get("field"), "op": NULL_TESTS[condition["op"]]}
    return condition


def either_value_of_one_field(query: dict, question: str) -> dict:
    """Equality filters on one field with different values, which no row meets at once, as one `in` filter."""
    values: dict[str, list] = {}
    for f in _filters(query):
        if isinstance(f, dict) and f.get("op") == "=" and isinstance(f.get("value"), (str, int, float)):
            values.setdefault(f["field"], []).append(f["value"])
    several = {field: list(dict.fromkeys(found)) for field, found in values.items() if len(set(found)) > 1}
    if not several:
        return query
    kept = [f for f in _filters(query) if not (isinstance(f, dict) and f.get("op") == "=" and f.get("field") in several)]
    return {**query, "filters": kept + [{"field": field, "op": "in", "value": found} for field, found in several.items()]}


#: Words that ask for a figure of each of several things named, not one over them all.
ASKS_FOR_EACH_NAMED = re.compile(
    r"\b(?:each|respectively|individually|apiece|separately|both|compared?|versus|vs)\b", re.IGNORECASE)


def each_listed_value_when_asked(query: dict, question: str) -> dict:
    """One aggregate row over the values an `in` filter lists ("the average gas price of type 0 and type 2
    transactions, of each") is a row per value where the question asks for each: the filter's field is grouped."""
    listed = [f["field"] for f in _filters(query) if isinstance(f, dict) and f.get("op") == "in"
              and isinstance(f.get("value"), list) and len(set(map(repr, f["value"]))) > 1]
    if query.get("dimensions") or not query.get("measures") or not listed or not ASKS_FOR_EACH_NAMED.search(question):
        return query
    return {**query, "dimensions": list(dict.fromkeys(listed))}


#: The rules, applied in order.
RULES: tuple[Callable[[dict, str], dict], ...] = (
    total_unless_a_series_is_asked, every_row_unless_a_count_is_asked, whole_table_unless_a_time_is_named,
    series_in_time_order, one_row_only_when_ranked, percent_when_a_percentage_is_asked, no_value_as_null,
    either_value_of_one_field, each_listed_value_when_asked)


#: Words that ask for a series by day besides those asking for each day: "per day", "daily".
ASKS_PER_DAY = re.compile(r"\bper\s+day\b|\bdaily\b", re.IGNORECASE)


def asks_for_days(question: str) -> bool:
    """Whether the question asks for a series by day ("on each of the last 7 days", "per day", "daily")."""
    return bool(ASKS_PER_DAY.search(question)) or "day" in periods_each_asked(question)


def _plan_steps(plan: dict) -> list[dict] | None:
    """A plan's steps as the model wrote them, or None where they are no list of queries (the layer says why)."""
    steps = plan.get("steps")
    return steps if isinstance(steps, list) and all(isinstance(step, dict) for step in steps) else None


def _links(step: dict) -> list[tuple[str, object]]:
    """(field, step) for each filter of a plan's step taking an earlier step's values (`{"step": n}`)."""
    return [(f.get("field"), f["value"].get("step")) for f in _filters(step) if isinstance(f.get("value"), dict)]


def a_series_of_what_was_found(plan: dict, question: str) -> dict:
    """`plan` with its first later step that groups only by the value a one-row step found split by day instead,
    where the question asks for days and no step splits by time."""
    steps = _plan_steps(plan)
    if not asks_for_days(question) or steps is None \
            or any(set(step.get("dimensions") or []) & TIME_DIMENSIONS for step in steps):
        return plan
    for number, step in enumerate(steps[1:], 2):
        found_one = {field for field, earlier in _links(step)
                     if isinstance(earlier, int) and 0 < earlier < number and steps[earlier - 1].get("limit") == 1}
        dimensions = step.get("dimensions") or []
        if dimensions and set(dimensions) <= found_one:
            daily = {**step, "dimensions": ["day"], "order_by": [{"field": "day", "direction": "asc"}], "limit": None}
            return {**plan, "steps": [*steps[:number - 1], daily, *steps[number:]]}
    return plan


#: Words that ask for the rows a step found taken together, and words that ask for each of them.
ASKS_FOR_TOGETHER = re.compile(
    r"\b(?:together|combined|altogether|collectively|in\s+total|in\s+all|between\s+them|as\s+a\s+group)\b",
    re.IGNORECASE)
ASKS_FOR_EACH = re.compile(r"\b(?:each|every|per|respectively|individually|apiece)\b", re.IGNORECASE)


def together_when_asked(plan: dict, question: str) -> dict:
    """`plan` answering for the found rows together (`"each": false`, its later steps not grouped by the values they
    take) where the question says together and never each."""
    steps = _plan_steps(plan)
    if not ASKS_FOR_TOGETHER.search(question) or ASKS_FOR_EACH.search(question) or steps is None:
        return plan
    ungrouped = []
    for step in steps:
        taken = {field for field, _ in _links(step)}
        kept = [d for d in step.get("dimensions") or [] if d not in taken]
        ungrouped.append({**step, "dimensions": kept} if taken and "dimensions" in step else step)
    return {**plan, "steps": ungrouped, "each": False}


#: Where a question's clause choosing rows ends and the clauses asking about those rows begin: a comma, then "how",
#: "what", "which" or "who" (after an "and", a "for each" or an "in that period").
CLAUSE_BREAK = re.compile(
    r",\s+(?:and\s+)?(?:(?:for\s+(?:each|every)(?:\s+of\s+them)?|in\s+that\s+period|over\s+th(?:at|ose)\s+(?:\d+\s+)?\w+)"
    r"\s*,?\s+)?(?=(?:how|what|which|who)\b)", re.IGNORECASE)


def step_questions(plan: dict, question: str) -> dict[int, str]:
    """The words each step of a plan answers, where its first step ranks and keeps a few rows and every later step
    takes their values: the first step the question's first clause that ranks ("Which day of the last 14 days burned
    the most ETH"), the later steps the clauses after it ("how much did it burn, and what fraction of that day's fees
    was burned"); fitted to the whole question, a step takes words meant for another (the fraction, for the day
    ranked by its burn). Empty for other plans (two windows side by side answer the whole question each)."""
    steps = _plan_steps(plan)
    if not steps or len(steps) < 2 or not steps[0].get("limit") \
            or not all(any(earlier == 1 for _, earlier in _links(step)) for step in steps[1:]):
        return {}
    for clause_break in CLAUSE_BREAK.finditer(question):
        first, rest = question[:clause_break.start()], question[clause_break.end():]
        if RANKS.search(first):
            return {1: first, **{number: rest for number in range(2, len(steps) + 1)}}
    return {}


#: The rules over a whole plan, before its steps are fitted one by one.
PLAN_RULES: tuple[Callable[[dict, str], dict], ...] = (a_series_of_what_was_found, together_when_asked)


def plan_fitted(plan: dict, question: str) -> dict:
    """`plan` with every plan rule applied."""
    for rule in PLAN_RULES:
        plan = rule(plan, question)
    return plan


def fitted(query: dict, question: str) -> dict:
    """`query` with every rule applied."""
    for rule in RULES:
        query = rule(query, question)
    return query
