"""The answer stage shared by every method and the server: a summary in words and a chart spec from the result."""

from __future__ import annotations

from typing import Any, Sequence

from askchain.errors import ConfigError
from askchain.llm.base import ChatModel


def answer_result(
    question: str, sql: str | None, columns: list[str], rows: Sequence[Sequence[Any]], *,
    truncated: bool, error: str | None, model: ChatModel,
) -> dict[str, Any]:
    from askchain.answer import chart_spec, summarize

    rows = [list(r) for r in rows]
    summary = summarize(question, sql, columns, rows, model, truncated=truncated, error=error)
    try:
        chart = chart_spec(columns, rows) if rows and not error else None
    except ConfigError:  # the chart is optional: plotly comes with the server extra
        chart = None
    return {"answer": summary, "chart": chart}
