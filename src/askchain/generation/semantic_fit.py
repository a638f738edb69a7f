"""A semantic query fitted to its question's words: parts a small model adds by habit, copying its examples, that the
question never asks for. Each rule is one function over the query (a dict as the model wrote it) and the question.

- A time dimension (a day, an hour, a week...) splits a total into a series; it stays only when the question asks
  for one ("per day", "each of the last 7 days", "daily", "which day", "the 3 days with", "compare", "when"), else
  the query is the window's total.
- A limit of more rows than one that the question never writes, where it leaves no count to the answer ("the top
  tokens"), is dropped: the question asks for every row (as `askchain.pipeline.limits` does for SQL).
"""

from __future__ import annotations

import re
from typing import Callable

from askchain.pipeline.limits import SOME_ROWS, question_numbers

#: The dimensions that split by time (every model names them alike: `block_time` is the raw event time).
TIME_DIMENSIONS = frozenset({"block_time", "hour_of_day", "day", "weekday", "weekday_number", "week", "month",
                             "day_of_year"})
#: Words that ask for a result split by time, or for a time itself.
ASKS_FOR_TIME = re.compile(
    r"\b(?:per|each|every|by|a|which|what|busiest|quietest)[\s-]+(?:single\s+)?(?:day|date|hour|week|month|weekday|year)"
    r"|\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:days|hours|weeks|months)\s+(?:of|with|had|when)\b"
    r"|\bcompare\b|\bthe (?:day|hour|week|month) before\b|\b(?:day|month|week|year) before it\b"
    r"|\b(?:daily|hourly|weekly|monthly|when|timestamps?|times?|dates?|trend|series|over time|day[- ]by[- ]day)\b"
    r"|\beach of the\b|\bday of (?:the )?(?:week|year)\b|\bhour of (?:the )?day\b|\bdays? of the week\b"
    r"|\b(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|weekends?|weekdays?)\b",
    re.IGNORECASE,
)


def total_unless_a_series_is_asked(query: dict, question: str) -> dict:
    dimensions = query.get("dimensions") or []
    if ASKS_FOR_TIME.search(question) or not set(dimensions) & TIME_DIMENSIONS:
        return query
    kept = [d for d in dimensions if d not in TIME_DIMENSIONS]
    order = [o for o in query.get("order_by") or [] if isinstance(o, dict) and o.get("field") not in TIME_DIMENSIONS]
    return {**query, "dimensions": kept, **({"order_by": order} if "order_by" in query else {})}


def every_row_unless_a_count_is_asked(query: dict, question: str) -> dict:
    limit = query.get("limit")
    if not isinstance(limit, int) or limit <= 1 or SOME_ROWS.search(question) or limit in question_numbers(question):
        return query
    return {**query, "limit": None}


#: The rules, applied in order.
RULES: tuple[Callable[[dict, str], dict], ...] = (total_unless_a_series_is_asked, every_row_unless_a_count_is_asked)


def fitted(query: dict, question: str) -> dict:
    """`query` with every rule applied."""
    for rule in RULES:
        query = rule(query, question)
    return query
