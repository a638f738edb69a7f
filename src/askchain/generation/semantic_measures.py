"""The measures and dimensions a semantic query picks, set against its question's words: a small model takes a field
that a fragment of the question names (the average gas limit for "the ratio of gas used to gas limit", the
recipient for "fee recipients"), or a measure in another unit than the question asks for (the number of
withdrawals for "how much ETH"). Each rule is one function over the query (a dict as the model wrote it), the
question and the query's model; askchain.generation.semantic applies them.

- A measure the question names by the longest phrase holding the words that name each pick (and longer than them)
  replaces those picks and the unnamed ones in their unit ("the ratio of gas used to gas limit" names block
  fullness; "gas limit" inside it, the average gas limit, and the average gas used is in gas too). A dimension
  named so replaces the picks named inside its phrase ("fee recipients": the block's builder, not the recipient).
- Where the question asks how many of the model's rows there are and no measure picked counts anything, the model's
  count of its rows joins the picks (`count_when_asked`).
- Where the question asks how many of the model's rows one of something else held on average ("how many token
  transfers did a transaction contain on average"), the model's measure of those rows per that one replaces the
  picks, and a split by that one goes (`per_one_when_asked`).
- Where the question keeps only the groups with at least (more, fewer than) N of the model's rows ("which fee
  recipient that produced at least 20 blocks"), the model's count of its rows joins the picks with that filter
  after aggregation (`count_threshold_when_asked`).
- Where the question asks what share of something a part of it holds ("what share of ERC-721 transfers were mints")
  and the query counts or sums it, filtered to the part, without a split but by time, the filter the question
  names last is the part whose share is asked (`share_of_part_when_asked`).
- A share (a fraction or a percentage) the question asks for by no word is replaced by the measure it names most
  (`share_only_when_asked`): the burned share of fees picked for "which day burned the most ETH" is the ETH burned.
- Where the question asks for an amount in a unit ("how much ETH", "in gwei", "as a fraction") that no measure or
  dimension picked is in, the model's measure in that unit whose words the question names most replaces the picks
  (a mean only where it asks for an average, an extreme only where it asks for one); a count picked stays beside it
  where the question also asks how many.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping

from askchain.generation.semantic_doubt import naming_words, words
from askchain.generation.semantic_fit import ASKS_FOR_SHARE, ordered_instead
from askchain.semantic.governed.naming import field_phrases, phrase_spans, phrase_words, stem
from askchain.semantic.governed.query import reshaped_besides
from askchain.semantic.governed.reading import TIME_DIMENSIONS

if TYPE_CHECKING:
    from askchain.semantic.governed.reading import Field, ModelSpec


def _picked(query: dict, spec: ModelSpec) -> list[str]:
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    return [m for m in measures if isinstance(m, str) and m in spec.measures]


def _replaced(query: dict, dropped: set[str], chosen: str) -> dict:
    """`query` measuring `chosen` in place of the `dropped` measures; an order by one of them orders by `chosen`."""
    measures = list(dict.fromkeys(chosen if m in dropped else m for m in query["measures"]))
    if not isinstance(query.get("order_by"), list):  # none, or malformed: the layer says what is wrong with it
        return {**query, "measures": measures}
    return {**query, "measures": measures, "order_by": ordered_instead(query["order_by"], dropped, chosen)}


def _named_at_length(picked: list[str], fields: Mapping[str, Field], question: str) -> tuple[str, set[str]] | None:
    """The one field of `fields` not picked that the question names by the longest phrase holding every phrase that
    names a pick (and longer than each), with those picks; None where there is none, or a pick is named elsewhere."""
    asked = phrase_words(question)
    spans = {name: phrase_spans(field_phrases(field), asked) for name, field in fields.items()}
    fragments = [found for name in picked for found in spans[name]]

    def holds_them(span: range) -> bool:
        return all(span.start <= found.start and found.stop <= span.stop and len(found) < len(span)
                   for found in fragments)

    holding = {name: max(around, key=len) for name, found in spans.items() if name not in picked
               and (around := [span for span in found if holds_them(span)])}
    if not fragments or not holding:
        return None
    length = max(map(len, holding.values()))
    best = [name for name, span in holding.items() if len(span) == length]
    return (best[0], {name for name in picked if spans[name]}) if len(best) == 1 else None


def measure_named_at_length(query: dict, question: str, spec: ModelSpec) -> dict:
    """The one measure of the query's model that the question names by the longest phrase holding those naming the
    picked measures, in place of the picks the question names only inside that phrase and of the picks it does not
    name in their unit (the average gas used beside the average gas limit, for "the ratio of gas used to gas
    limit"); a pick it names elsewhere keeps the query as written."""
    picked = _picked(query, spec)
    found = _named_at_length(picked, spec.measures, question)
    if found is None:
        return query
    chosen, fragments = found
    units = {spec.measures[m].unit for m in fragments}
    return _replaced(query, fragments | {m for m in picked if spec.measures[m].unit in units}, chosen)


def dimension_named_at_length(query: dict, question: str, spec: ModelSpec) -> dict:
    """The one dimension of the query's model that the question names by the longest phrase holding those naming
    the picked dimensions, in place of the picks it names only inside that phrase: "fee recipients" is the block's
    builder, not the transaction's recipient; "day of the week" a weekday, not a date. A true/false dimension is
    never chosen: "a transfer from the zero address" names a mint, a filter, not a split of the senders. An order by
    a replaced dimension orders by the one chosen."""
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    picked = [d for d in dimensions if isinstance(d, str) and d in spec.dimensions]
    splits = {name: field for name, field in spec.dimensions.items() if field.unit != "boolean" or name in picked}
    found = _named_at_length(picked, splits, question)
    if found is None:
        return query
    chosen, fragments = found
    fitted = {**query, "dimensions": list(dict.fromkeys(chosen if d in fragments else d for d in dimensions))}
    if isinstance(query.get("order_by"), list):
        fitted["order_by"] = ordered_instead(query["order_by"], fragments, chosen)
    return fitted


#: Not after "are" or "is": "(withdrawal amounts are in gwei)" says how the data stores them, not what to answer in.
_NOT_STORED = r"(?<!\bare\s)(?<!\bis\s)"
#: Words asking for an amount in a unit (a measure's `unit`), each unit's first match in the question counting. A
#: fraction is asked as the answer's form ("as a fraction", "between 0 and 1"), not by "what fraction of" (a share,
#: which askchain.generation.semantic_fit.share_of_total_when_asked answers).
ASKS_FOR_UNIT = {
    "ETH": re.compile(rf"\bhow\s+much\s+ETH\b|{_NOT_STORED}\bin\s+ETH\b", re.IGNORECASE),
    "gwei": re.compile(rf"\bhow\s+much\s+gwei\b|{_NOT_STORED}\bin\s+gwei\b", re.IGNORECASE),
    "fraction": re.compile(r"\bas\s+a\s+fraction\b|\bbetween\s+0\s+and\s+1\b|\bfraction\s*\(?0\s*(?:-|to)\s*1\b",
                           re.IGNORECASE),
}
#: Words asking for an average, or for an extreme, and the aggregations a measure answering them applies.
ASKS_FOR_AGGREGATION = (
    (re.compile(r"\b(?:average|mean|typical|avg)\b", re.IGNORECASE), frozenset({"mean"})),
    (re.compile(r"\b(?:largest|highest|biggest|maximum|max|smallest|lowest|minimum|min)\b", re.IGNORECASE),
     frozenset({"max", "min"})),
)
ASKS_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)


def unit_asked(question: str) -> str | None:
    """The unit the question asks its amount in: the one whose words come first ("How much ETH ... (amounts are in
    gwei)" asks for ETH)."""
    found = [(match.start(), unit) for unit, pattern in ASKS_FOR_UNIT.items() if (match := pattern.search(question))]
    return min(found)[1] if found else None


def _aggregation_asked(measures: list, question: str, spec: ModelSpec) -> list[str]:
    """Of `measures`, those aggregating as the question asks: means for an average, extremes for a largest or a
    smallest, the others where it asks for neither."""
    asked = [kinds for pattern, kinds in ASKS_FOR_AGGREGATION if pattern.search(question)]
    every_kind = frozenset().union(*(kinds for _, kinds in ASKS_FOR_AGGREGATION))

    def fits(measure: str) -> bool:
        applied = spec.measures[measure].aggregations
        return any(applied & kinds for kinds in asked) if asked else not applied & every_kind

    return [m for m in measures if fits(m)]


def measure_in_the_unit_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """The model's measure in the unit the question asks for, where no field picked is in it: of those aggregating
    as asked, the only one, or the one sharing most naming words with the question besides the word for the model's
    rows (none where two tie)."""
    picked, unit = _picked(query, spec), unit_asked(question)
    if not picked or unit is None:
        return query
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    fields = [spec.measures[m] for m in picked] + [spec.dimensions[d] for d in dimensions
                                                  if isinstance(d, str) and d in spec.dimensions]
    if any(f.unit == unit for f in fields):
        return query
    chosen = _named_most([m for m, f in spec.measures.items() if f.unit == unit], question, spec)
    if chosen is None:  # none in the unit, or a tie (every one named by no word, where there are several)
        return query
    kept = {m for m in picked if spec.measures[m].counts} if ASKS_HOW_MANY.search(question) else set()
    replaced = _replaced(query, set(picked) - kept, chosen)
    measures = replaced["measures"]
    return replaced if chosen in measures else {**replaced, "measures": [*measures, chosen]}


def _named_most(measures: list[str], question: str, spec: ModelSpec) -> str | None:
    """Of `measures`, those aggregating as the question asks, the only one, or the one sharing most naming words with
    the question besides the word for the model's rows (which names no one measure of them); None for a tie."""
    asked = words(question) - {stem(row) for row in spec.rows}
    scores = {m: len(naming_words(spec.measures[m]) & asked) for m in _aggregation_asked(measures, question, spec)}
    best = max(scores.values(), default=0)
    chosen = [m for m, score in scores.items() if score == best]
    return chosen[0] if len(chosen) == 1 else None


#: Words asking for a share in any form: a share, fraction, proportion, percentage, ratio or rate, or an amount
#: relative to another ("out of", "relative to").
ASKS_FOR_ANY_SHARE = re.compile(r"\b(?:share|fraction|proportion|portion|per\s?cent(?:age)?|ratio|rate|how\s+often)s?\b"
                                r"|%|\bout\s+of\b|\brelative\s+to\b|\bcompared\s+to\s+the\s+(?:gas\s+)?limit\b",
                                re.IGNORECASE)


def share_only_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """In place of a share the question never asks for, by any word for a share or by the share's own phrases
    ("utilization", "how full"), the model's measure that is no share and whose words the question names most (one
    named by at least one word): a small model picks the ready-made share beside the amount the question names ("which
    day burned the most ETH": the burned share of fees)."""
    picked = _picked(query, spec)
    asked = phrase_words(question)
    unasked = {m for m in picked if spec.measures[m].is_share
               and not phrase_spans(field_phrases(spec.measures[m]), asked)}
    if not unasked or ASKS_FOR_ANY_SHARE.search(question):
        return query
    chosen = _named_most([m for m, f in spec.measures.items() if not f.is_share], question, spec)
    if chosen is None or not naming_words(spec.measures[chosen]) & words(question):
        return query
    return _replaced(query, unasked, chosen)


#: "How many", the three words after it (the noun it counts among them: "how many blob transactions") and the rest
#: of its clause.
HOW_MANY_OF = re.compile(r"\bhow\s+many\s+([\w-]+(?:\s+[\w-]+){0,2})([^,;?]*)", re.IGNORECASE)
#: Words making a count another measure: of distinct values, or per one row ("how many transfers did a transaction
#: contain": an average per transaction).
_NOT_A_ROW_COUNT = re.compile(r"\b(?:distinct|unique|different)\b|\b(?:did|does|do)\s+(?:a|an|each|one)\s",
                              re.IGNORECASE)


def count_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """The model's count of its rows beside the measures picked, where the question asks how many of its rows there
    are ("for each, how many blob transactions did its blocks carry and how many blobs on average"; "how many
    delegatecalls were made, and to how many distinct contracts") and no measure picked counts rows (a distinct count
    counts values): a small model answers the other asks and drops the count."""
    picked = _picked(query, spec)
    count = _row_count(spec)
    if not picked or count is None or any(_counts_each_row(spec.measures[m]) for m in picked):
        return query
    rows = {stem(row) for row in spec.rows}
    if not any(_counts_rows(match[1].split(), match[2], rows) for match in HOW_MANY_OF.finditer(question)):
        return query
    return {**query, "measures": [count, *query["measures"]]}


def _counts_each_row(field: Field) -> bool:
    """Whether a measure counts rows (all, or those of a kind): not a distinct count, which counts values."""
    return field.counts and "nunique" not in field.aggregations


def _counts_rows(words: list[str], rest: str, rows: set[str]) -> bool:
    """Whether "how many" followed by `words` and `rest` asks for a count of rows (their stems `rows`): one of the
    words names them and nothing makes it a distinct count or a count per one row."""
    at = next((i for i, word in enumerate(words) if stem(word) in rows), None)
    return at is not None and not _NOT_A_ROW_COUNT.search(" ".join([*words[:at], *words[at + 1:], rest]))


#: Words splitting a share among the rows of something other than time ("each of the top 5", "each transaction
#: type"), taking it of a top N ("the 10 largest holders") or averaging a ratio ("on average, what fraction of its
#: gas limit"): no part of the rows, then.
_NOT_A_PART = re.compile(r"\b(?:each|every)\s+(?!(?:of\s+the\s+)?(?:\w+\s+){0,2}(?:hours?|days?|weeks?|months?)\b)"
                         r"|\btop\s+\d+|\b\d+\s+(?:largest|biggest|most|highest)\b|\baverage\b|\bmean\b",
                         re.IGNORECASE)


def asks_for_share_of_a_part(question: str) -> bool:
    """Whether the question asks what share of something a part of it holds, by time or in all: not each row's
    share of a split, nor a top N's."""
    return bool(ASKS_FOR_SHARE.search(question)) and not _NOT_A_PART.search(question)


def share_of_part_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """The share of its measures a part of the rows holds, where the question asks for a share of something ("what
    share of ERC-721 transfers were mints", "what fraction of the fees came from type 2 transactions") and the query
    counts or sums (no mean, share or distinct count) over filters on dimensions, split by time or not at all: a small
    model filters to the part and counts it. The part is the filter the question names last (after the words naming
    the whole: "of ERC-721 transfers"); a filter it does not name is never the part where another is named."""
    picked = _picked(query, spec)
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    if not asks_for_share_of_a_part(question) or not picked or len(picked) != len(query["measures"]) \
            or any(not spec.measures[m].adds_up for m in picked) or set(dimensions) - TIME_DIMENSIONS \
            or reshaped_besides(query):
        return query
    filters = query.get("filters") if isinstance(query.get("filters"), list) else []
    on_values = [f for f in filters if isinstance(f, dict) and f.get("field") in spec.dimensions
                 and not isinstance(f.get("value"), dict)]  # an earlier step's values ({"step": 1}) are no part
    if not on_values:
        return query
    asked = phrase_words(question)
    named = [(min((span.start for span in phrase_spans(_filter_phrases(f, spec), asked)), default=-1), i)
             for i, f in enumerate(on_values)]
    part = on_values[max(named)[1]]
    return {**query, "filters": [f for f in filters if f is not part], "share_where": [part]}


def _filter_phrases(condition: dict, spec: ModelSpec) -> tuple[str, ...]:
    """The phrases naming a filter: its field's, and its value where that is a word or a number ("type 2")."""
    value = condition.get("value")
    own = (str(value),) if isinstance(value, (str, int)) and not isinstance(value, bool) else ()
    return (*field_phrases(spec.dimensions[condition["field"]]), *own)


#: A bound on how many rows a group has: "at least 20 blocks", "more than 1,000 transfers", "fewer than 5 calls".
COUNT_BOUND = re.compile(r"\b(at\s+least|more\s+than|over|fewer\s+than|less\s+than|under|at\s+most|no\s+more\s+than)"
                         r"\s+(\d[\d,]*)\s+([\w-]+)", re.IGNORECASE)
#: Each bound's words as a filter's operator.
_BOUND_OPERATORS = {"at least": ">=", "more than": ">", "over": ">", "fewer than": "<", "less than": "<", "under": "<",
                    "at most": "<=", "no more than": "<="}


def count_threshold_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """The model's count of its rows, filtered after aggregation to the bound the question puts on it, where the query
    groups by a dimension other than time and the question keeps only the groups with at least (more, fewer than) N
    of the model's rows ("which fee recipient that produced at least 20 blocks"; "each token with at least 1,000
    transfers"): a small model ranks every group and drops the bound. None where a filter on that count is written."""
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    count = _row_count(spec)
    measures = query.get("measures") if isinstance(query.get("measures"), list) else []
    filters = query.get("filters") if isinstance(query.get("filters"), list) else []
    rows = {stem(row) for row in spec.rows}
    bound = next((m for m in COUNT_BOUND.finditer(question) if stem(m[3]) in rows), None)
    if bound is None or count is None or not set(dimensions) - TIME_DIMENSIONS \
            or any(isinstance(f, dict) and f.get("field") == count for f in filters):
        return query
    bounded = {"field": count, "op": _BOUND_OPERATORS[" ".join(bound[1].lower().split())],
               "value": int(bound[2].replace(",", ""))}
    return {**query, "measures": [*measures, count] if count not in measures else measures,
            "filters": [*filters, bounded]}


def _row_count(spec: ModelSpec) -> str | None:
    """The model's measure counting its rows (`_.count()`), if it has one."""
    return next((name for name, field in spec.measures.items() if field.expr.replace(" ", "") == "_.count()"), None)


#: "How many <rows> did a <one> ...": the rows of one thing; asked "on average" (before or after), averaged over them.
HOW_MANY_PER_ONE = re.compile(r"\bhow\s+many\s+(?:[\w-]+\s+){0,2}?([\w-]+)\s+(?:did|does|do)\s+(?:a|an|each|one)\s+"
                              r"([\w-]+)\b", re.IGNORECASE)
ASKS_ON_AVERAGE = re.compile(r"\b(?:on\s+average|average|typically)\b", re.IGNORECASE)


def per_one_when_asked(query: dict, question: str, spec: ModelSpec) -> dict:
    """The model's measure of its rows per one of something ("transfers per transaction") in place of the picks,
    where the question asks how many of those rows one of them held on average ("how many token transfers did a
    transaction that moved tokens contain on average"; "on average, how many log entries did a transaction emit"):
    a small model averages another measure per that thing. A split by the one it names goes: the average is over
    all of them."""
    asked = HOW_MANY_PER_ONE.search(question)
    if asked is None or not ASKS_ON_AVERAGE.search(question) or not _picked(query, spec):
        return query
    rows, one = stem(asked[1]), stem(asked[2])
    named = [name for name, field in spec.measures.items()
             if any(phrase_words(p)[-3:] == (rows, "per", one) for p in (field.label, *field.synonyms))]
    if len(named) != 1 or named[0] in query["measures"]:
        return query
    dimensions = query.get("dimensions") if isinstance(query.get("dimensions"), list) else []
    split = {d for d in dimensions
             if d in spec.dimensions and (one,) in map(phrase_words, field_phrases(spec.dimensions[d]))}
    fitted = _replaced(query, set(query["measures"]), named[0])
    if not split:
        return fitted
    kept = [d for d in dimensions if d not in split]
    order = [o for o in fitted.get("order_by") or []
             if kept and (not isinstance(o, dict) or o.get("field") not in split)]
    return {**fitted, "dimensions": kept, **({"order_by": order} if "order_by" in fitted else {})}
