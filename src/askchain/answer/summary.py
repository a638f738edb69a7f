"""A result in words: one paragraph from the model, kept only if every number in it comes from the rows."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any, Iterable, Sequence

from askchain.llm.base import ChatModel
from askchain.prompts import load_prompt

#: Rows and characters per cell shown to the model; the answer may only quote what it was shown.
PROMPT_ROWS = 20
CELL_CHARS = 80
MAX_TOKENS = 160

# 1,234,567.89 or 1234.5 or 42; a leading minus is ignored (answers say "fell by 5" as often as "-5").
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w])")


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
    """One paragraph answering `question` from the rows; a templated sentence when the model's numbers don't check out."""
    if not rows:
        return f"I could not answer this question: {error}" if error else "The query ran but returned no rows."
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
    if not text or unsupported_numbers(text, [question, len(rows), *(v for r in shown for v in r), *(_cell(v) for r in shown for v in r)]):
        text = templated_answer(columns, rows)
    return text + caveats(len(rows), truncated=truncated, error=error)


def whole_sentences(text: str) -> str:
    """The text up to its last complete sentence: a reply cut by the token limit must not end mid-word."""
    if not text or text[-1] in ".!?)\"'":
        return text
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[: end + 1] if end > 0 else text


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as pipe-separated text, the way the model sees them."""
    lines = [" | ".join(str(c) for c in columns)]
    lines += [" | ".join(_cell(v)[:CELL_CHARS] for v in row) for row in rows]
    return "\n".join(lines)


def unsupported_numbers(text: str, sources: Iterable[Any]) -> list[str]:
    """Numbers written in `text` that match no number in `sources` (cells, the question, the row count).

    A written number matches a source value when they are equal after rounding the source to the written
    number's decimals, so "1,234.57" is supported by 1234.5678 but "25%" is not supported by 0.25.
    """
    known = [n for source in sources for n in _numbers_in(source)]
    unsupported = []
    for token in _NUMBER.findall(text):
        written = decimal.Decimal(token.replace(",", ""))
        places = max(0, -written.as_tuple().exponent)
        if not any(_rounds_to(value, written, places) for value in known):
            unsupported.append(token)
    return unsupported


def templated_answer(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The fallback: the result stated plainly, every value quoted from the rows."""
    first = ", ".join(f"{c} = {_cell(v)}" for c, v in zip(columns, rows[0]))
    if len(rows) == 1 and len(columns) == 1:
        return f"The answer is {_cell(rows[0][0])} ({columns[0]})."
    if len(rows) == 1:
        return f"The result is one row: {first}."
    return f"The query returned {len(rows)} rows; the first is {first}."


def caveats(row_count: int, *, truncated: bool, error: str | None) -> str:
    notes = []
    if truncated:
        notes.append(f"Only the first {row_count} rows were kept (the row limit was reached), so the answer may be incomplete.")
    if error:
        notes.append(f"Caution: {error.rstrip('.')}.")
    return "".join(" " + n for n in notes)


def _numbers_in(value: Any) -> list[decimal.Decimal]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float, decimal.Decimal)):
        try:
            return [abs(decimal.Decimal(str(value)))]
        except decimal.InvalidOperation:  # nan, inf
            return []
    text = value.isoformat() if isinstance(value, (dt.date, dt.datetime, dt.time)) else str(value)
    return [decimal.Decimal(t.replace(",", "")) for t in _NUMBER.findall(text)]


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
