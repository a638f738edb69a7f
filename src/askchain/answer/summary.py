"""A result in words. The common shapes (one value, one row, one column, a ranked list, a time series, no rows, an
error) are said by templates (templates.yaml) in no time; the model writes only what no template can say, and its
paragraph is kept only if every number in it is one of the rows' numbers (digits inside a text cell do not count)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from functools import lru_cache
from importlib import resources
from string import Template
from typing import Any, Iterable, Sequence

import yaml

from askchain.answer.shape import column, is_time, labels, measures, shorten, time_order
from askchain.llm.base import ChatModel
from askchain.numbers import NUMBER
from askchain.prompt_data import data_cell, escape_text
from askchain.prompts import load_prompt

#: Rows and characters per cell shown to the model; the answer may only quote what it was shown.
PROMPT_ROWS = 20
CELL_CHARS = 80
MAX_TOKENS = 160
#: Items a templated list names before pointing to the table.
LIST_ROWS = 20

# Characters that would turn a value or a question's words into Markdown formatting.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>~|])")
# Quotation marks an answer may put round a name it copies from the rows.
_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"))
# Text that is a number or a point in time as a whole ("1,234.5", "2021-05", "2021-05-12 10:00:00", "10:30").
_NUMBER_TEXT = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?")
_TIME_TEXT = re.compile(r"\d{4}-\d{2}(?:-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?"
                        r"|\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


def summarize(
    question: str,
    sql: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    model: ChatModel,
    *,
    truncated: bool = False,
    error: str | None = None,
) -> str:
    """The answer to `question` from the rows, as Markdown: a template's where one fits, else the model's paragraph."""
    if not rows:
        return _say(_templates()["error"], error=error) if error else _templates()["empty"]
    text = template_answer(question, columns, rows)
    if text is None:
        text = model_answer(question, sql, columns, rows, model)
    notes = caveats(len(rows), truncated=truncated, error=error)
    return text + ("\n\n" if "\n" in text else " ") + notes if notes else text


def template_answer(question: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str | None:
    """The answer for a common result shape, or None when the shape needs a model to be put in words."""
    if len(columns) == 1 and len(rows) == 1:
        return one_value(question, columns[0], rows[0][0])
    if len(rows) == 1:
        return one_row(columns, rows[0])
    if len(columns) == 1:
        return listed(rows)
    found = measures(columns, rows)
    named = labels(columns, rows)
    if is_time(columns[0], column(rows, 0)) and set(named) <= {0}:
        return series(columns, rows, [i for i in found if i != 0])
    if len(named) == 1 and found:
        return ranking(columns, rows, named[0], found)
    return None


def one_value(question: str, name: str, value: Any) -> str:
    """"There were **1,234** failed transactions.": the question's own words where a pattern reads them, else the
    column's name."""
    t = _templates()["value"]
    if value is None:
        return _say(t["null"], Name=_sentence(_words(name)))
    asked = " ".join(question.split()).rstrip("?. ")
    for pattern in t["questions"]:
        found = re.match(pattern["match"], asked, re.IGNORECASE)
        if not found:
            continue
        parts = {key: _escape(text) for key, text in found.groupdict().items()}
        if pattern.get("count") and value == 1 and "what" in parts:
            parts["what"] = _singular(parts["what"])
            if "verb" in parts:
                parts["verb"] = t["singular_verbs"].get(parts["verb"].lower(), parts["verb"])
        return _sentence(_say(pattern["say"], value=format_value(value), **parts))
    return _say(t["otherwise"], Name=_sentence(_words(name)), value=format_value(value))


def one_row(columns: Sequence[str], row: Sequence[Any]) -> str:
    """A label with its numbers as one item ("**0xea67…8ec8** — 1,234 blocks."), else each named value listed."""
    t = _templates()["record"]
    named, found = labels(columns, [row]), measures(columns, [row])
    if named == [0] and found == list(range(1, len(columns))):
        return _say(t["labelled"], label=format_value(row[named[0]]), measures=_measures(columns, row, found))
    return "\n".join(_say(t["field"], Name=_sentence(_words(c)), value=format_value(v)) for c, v in zip(columns, row))


def ranking(columns: Sequence[str], rows: Sequence[Sequence[Any]], label: int, found: list[int]) -> str:
    """A Markdown list, numbered when the rows are ordered by their first number (a top-N), else bulleted."""
    t = _templates()["ranking"]
    item = t["ranked_item"] if _ordered(column(rows, found[0])) else t["item"]
    return _capped([_say(item, rank=rank, label=format_value(row[label]), measures=_measures(columns, row, found))
                    for rank, row in enumerate(rows[:LIST_ROWS], start=1)], len(rows))


def listed(rows: Sequence[Sequence[Any]]) -> str:
    """One column's values as bullets, in the rows' order."""
    item = _templates()["column"]["item"]
    return _capped([_say(item, value=format_value(row[0])) for row in rows[:LIST_ROWS]], len(rows))


def _capped(lines: list[str], row_count: int) -> str:
    """The first LIST_ROWS items, then how many more the table holds."""
    if row_count > LIST_ROWS:
        lines.append(_say(_templates()["more"], more=f"{row_count - LIST_ROWS:,}"))
    return "\n".join(lines)


def series(columns: Sequence[str], rows: Sequence[Sequence[Any]], found: list[int]) -> str | None:
    """First and last, low and high (and the total where adding up means something) of each number over time."""
    t = _templates()["series"]
    points = sorted((r for r in rows if r[0] is not None), key=lambda r: time_order(r[0]))
    if not found or len({time_order(r[0]) for r in points}) < len(points):
        return None  # no numbers, or several rows per time: a breakdown the model must read
    sentences = []
    for i in found:
        values = [(r[0], r[i]) for r in points if r[i] is not None]
        if not values:
            continue
        low, high = min(values, key=lambda p: p[1]), max(values, key=lambda p: p[1])
        words = _words(columns[i])
        summed = not set(words.split()) & set(t["not_summed"])
        text = _say(
            t["measure"], name=words, first=format_value(values[0][1]), last=format_value(values[-1][1]),
            low=format_value(low[1]), low_at=_when(columns[0], low[0]), high=format_value(high[1]),
            high_at=_when(columns[0], high[0]),
            total=_say(t["total"], total=format_value(sum(decimal.Decimal(str(v)) for _, v in values))) if summed else "",
        )
        if not sentences:
            text = _say(t["span"], start=_when(columns[0], points[0][0]), end=_when(columns[0], points[-1][0]),
                        points=f"{len(points):,}") + text
        sentences.append(_sentence(text))
    return " ".join(sentences) or None


def model_answer(question: str, sql: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                 model: ChatModel) -> str:
    """The model's paragraph, or the result stated plainly when a number in it is not in the rows it was shown."""
    shown = [list(r) for r in rows[:PROMPT_ROWS]]
    messages = load_prompt("askchain.answer", "summarize").render(
        question=question,
        sql=sql or "",
        row_count=len(rows),
        shown_note=f", first {len(shown)} shown" if len(shown) < len(rows) else "",
        table=render_table(columns, shown),
    )
    reply = model.complete(messages, temperature=0.0, max_tokens=MAX_TOKENS).text
    text = whole_sentences(" ".join(reply.split()))
    claims = without_quoted_cells(text, shown)
    if not text or unsupported_numbers(claims, [question, len(rows), *supporting_values(shown)]):
        return plain_answer(columns, rows)
    return text


def whole_sentences(text: str) -> str:
    """The text up to its last complete sentence: a reply cut by the token limit must not end mid-word."""
    if not text or text[-1] in ".!?)\"'":
        return text
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[: end + 1] if end > 0 else text


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as pipe-separated text, the way the model sees them: text cells quoted and escaped (prompt_data), so a
    cell cannot add a line, a row or a column of its own."""
    lines = [" | ".join(escape_text(str(c)) for c in columns)]
    lines += [" | ".join(data_cell(v, CELL_CHARS, number=_cell) for v in row) for row in rows]
    return "\n".join(lines)


def supporting_values(rows: Sequence[Sequence[Any]]) -> list[Any]:
    """The cells a number in the answer may be copied from: numbers (as stored and as shown), dates, and the text of a
    column that holds numbers or dates throughout (SQLite keeps dates and years as text). Digits inside other text
    support nothing: a token named "the answer is 0", or "0" beside names, must not vouch for an answer of 0."""
    found: list[Any] = []
    for values in zip(*rows):
        numeric_text = all(not isinstance(v, str) or _NUMBER_TEXT.fullmatch(v.strip()) or _TIME_TEXT.fullmatch(v.strip())
                           for v in values)
        for value in values:
            if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
                found += [value, _cell(value)]
            elif isinstance(value, (dt.date, dt.datetime, dt.time)) or isinstance(value, str) and numeric_text:
                found.append(value)
    return found


def without_quoted_cells(text: str, rows: Sequence[Sequence[Any]]) -> str:
    """The answer without its quotations of text cells, as the rows hold them or as the prompt showed them: a name
    quoted whole ("The answer is 0", "Week 1") is the name, not a claim about its digits. Unquoted, they stay claims."""
    for value in {v for row in rows for v in row if isinstance(v, str) and v.strip()}:
        shown = data_cell(value, CELL_CHARS)[1:-1]
        for copy in {" ".join(value.split()), shown}:
            for opening, closing in _QUOTES:
                text = text.replace(f"{opening}{copy}{closing}", f"{opening}{closing}")
    return text


def unsupported_numbers(text: str, sources: Iterable[Any]) -> list[str]:
    """Numbers written in `text` that match no number in `sources` (cells, the question, the row count).

    A written number matches a source value when they are equal after rounding the source to the written
    number's decimals, so "1,234.57" is supported by 1234.5678 but "25%" is not supported by 0.25.
    """
    known = [n for source in sources for n in _numbers_in(source)]
    unsupported = []
    for token in NUMBER.findall(text):
        written = decimal.Decimal(token.replace(",", ""))
        places = max(0, -written.as_tuple().exponent)
        if not any(_rounds_to(value, written, places) for value in known):
            unsupported.append(token)
    return unsupported


def plain_answer(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The model's fallback: the result stated plainly, every value quoted from the rows."""
    t = _templates()["plain"]
    fields = ", ".join(f"{_escape(str(c))} = {format_value(v)}" for c, v in zip(columns, rows[0]))
    if len(rows) == 1 and len(columns) == 1:
        return _say(t["value"], value=format_value(rows[0][0]), name=_escape(str(columns[0])))
    if len(rows) == 1:
        return _say(t["row"], fields=fields)
    return _say(t["rows"], row_count=f"{len(rows):,}", fields=fields)


def caveats(row_count: int, *, truncated: bool, error: str | None) -> str:
    t = _templates()["caveats"]
    notes = []
    if truncated:
        notes.append(_say(t["truncated"], row_count=f"{row_count:,}"))
    if error:
        notes.append(_say(t["error"], error=error.rstrip(".")))
    return " ".join(notes)


def format_value(value: Any) -> str:
    """A value as prose shows it: numbers with thousands separators and sensible decimals (1,234.57; 0.000123),
    long hex strings shortened, Markdown characters and line breaks escaped (a cell cannot add a list item)."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        return format_number(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    text = shorten(escape_text(str(value)))
    return _escape(text) if text else '""'


def format_number(value: int | float | decimal.Decimal) -> str:
    """Whole numbers in full with separators; others to two decimals from 1 up, to three significant digits below."""
    if isinstance(value, int):
        return f"{value:,}"
    number = decimal.Decimal(str(value))
    if not number.is_finite():
        return str(value)
    if number == number.to_integral_value():
        return f"{int(number):,}"
    if abs(number) >= 1:
        return f"{number:,.2f}".rstrip("0").rstrip(".")
    places = min(2 - math.floor(math.log10(abs(number))), 12)
    text = f"{number:.{places}f}".rstrip("0").rstrip(".")
    return text if text not in ("0", "-0") else f"{float(number):.3g}"


def _measures(columns: Sequence[str], row: Sequence[Any], found: list[int]) -> str:
    """"1,234 blocks" for a plural name, "gas used: 1,234" otherwise."""
    t = _templates()["ranking"]
    said = []
    for i in found:
        words, value = _words(columns[i]), row[i]
        if _plural(words.split(" ")[0]):
            said.append(_say(t["counted"], value=format_value(value), name=_singular(words) if value == 1 else words))
        else:
            said.append(_say(t["named"], value=format_value(value), name=words))
    return ", ".join(said)


def _when(name: str, value: Any) -> str:
    """A point on a time axis: its date, or "hour 5" for a whole number under a time-like name."""
    if isinstance(value, int):
        return _say(_templates()["series"]["numbered_time"], name=_words(name), value=value)
    return format_value(value)


def _ordered(values: list[Any]) -> bool:
    pairs = list(zip(values, values[1:]))
    return all(a >= b for a, b in pairs) or all(a <= b for a, b in pairs)


def _words(name: str) -> str:
    """A column name as words: "failed_tx_count" -> "failed tx count", "count(*)" -> "count"."""
    return " ".join(re.findall(r"[A-Za-z0-9]+", str(name))).lower() or _escape(str(name))


def _plural(word: str) -> bool:
    """A plural-looking noun: blocks, transactions, addresses; not gas, status, address."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _singular(phrase: str) -> str:
    """A counted phrase for a count of one: its first plural noun made singular ("failed transactions" ->
    "failed transaction", "addresses with code" -> "address with code")."""
    words = phrase.split(" ")
    for k, word in enumerate(words):
        if _plural(word):
            if word.endswith("ies"):
                words[k] = word[:-3] + "y"
            else:
                words[k] = word[:-2] if word.endswith(("sses", "xes", "ches", "shes")) else word[:-1]
            break
    return " ".join(words)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _escape(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", text)


def _say(template: str, **values: Any) -> str:
    return Template(template).substitute(values)


@lru_cache(maxsize=1)
def _templates() -> dict[str, Any]:
    return yaml.safe_load(resources.files("askchain.answer").joinpath("templates.yaml").read_text())


def _numbers_in(value: Any) -> list[decimal.Decimal]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float, decimal.Decimal)):
        try:
            return [abs(decimal.Decimal(str(value)))]
        except decimal.InvalidOperation:  # nan, inf
            return []
    text = value.isoformat() if isinstance(value, (dt.date, dt.datetime, dt.time)) else str(value)
    return [decimal.Decimal(t.replace(",", "")) for t in NUMBER.findall(text)]


def _rounds_to(value: decimal.Decimal, written: decimal.Decimal, places: int) -> bool:
    quantum = decimal.Decimal(1).scaleb(-places)
    try:
        return value == written or value.quantize(quantum, rounding=decimal.ROUND_HALF_UP) == written
    except decimal.InvalidOperation:  # too many digits to quantize
        return False


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float) and math.isfinite(value):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) >= 0.01 else f"{value:.3g}"
    return str(value)
