"""The answer stage shared by every method: a summary in words and a chart spec from the chosen result."""

from __future__ import annotations

from typing import Any

from askchain.db.base import QueryResult
from askchain.llm.base import ChatModel


def answer_result(question: str, sql: str | None, result: QueryResult | None, error: str | None, model: ChatModel) -> dict[str, Any]:
    from askchain.answer import chart_spec, summarize

    columns = result.columns if result else []
    rows = [list(r) for r in result.rows] if result else []
    summary = summarize(question, sql, columns, rows, model, truncated=bool(result and result.truncated), error=error)
    try:
        chart = chart_spec(columns, rows) if rows else None
    except Exception:  # the chart is optional: plotly may not be installed outside the server extra
        chart = None
    return {"answer": summary, "chart": chart}
