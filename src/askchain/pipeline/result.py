"""What every method returns: the same shape for the CLI's --json, the Python API and the server."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AskResult(BaseModel):
    question: str
    sql: str | None = None
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    #: Where `error` is validation's findings (no candidate passed it): each error finding's rule id, kind and
    #: message, which error classes read (askchain.eval.results); empty where the error is the engine's.
    error_findings: list[dict[str, str]] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float = 0.0
    method: str = "baseline"
    model: str = ""
    db: str = ""
    run_id: str | None = None
    bytes_processed: int | None = None
    answer: str | None = None
    chart: dict[str, Any] | None = None
    #: How the question was read: the conventions applied ("last 7 days = the 7 full UTC days before today").
    readings: list[str] = Field(default_factory=list)
    #: How current the data is ("data through block N, 2026-11-27 23:51 UTC"), where the database says
    #: (Engine.freshness); a second line where the answer read a table the data holds only in part (a sync's balances).
    freshness: str | None = None
    #: Every SQL the method executed, with its outcome (for evaluation: was some candidate right?).
    candidates: list[dict[str, Any]] = Field(default_factory=list)
    #: How sure the answer is (high, medium, low; None when it abstained) and why (askchain.pipeline.confidence).
    confidence: str | None = None
    confidence_reasons: list[str] = Field(default_factory=list)
    #: With a low-confidence answer, the other candidate groups' results: {sql, votes, columns, rows, row_count}.
    alternatives: list[dict[str, Any]] = Field(default_factory=list)
    #: The data cannot answer the question: no SQL and no error, and `answer` says what the data lacks.
    abstained: bool = False
    #: A question answered in several steps: each step's question, SQL, error and row count (the last one's result
    #: is `rows`); empty when one query answered it.
    steps: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def abstention_reason(self) -> str | None:
        """Why the question was not answered (the first reason given), None when it was."""
        return self.confidence_reasons[0] if self.abstained and self.confidence_reasons else None

    def public(self) -> dict[str, Any]:
        """The documented --json shape."""
        keys = ("question", "sql", "columns", "rows", "error", "usage", "elapsed_s", "run_id", "method", "model", "db",
                "truncated", "answer", "chart", "readings", "freshness", "confidence", "confidence_reasons", "alternatives", "abstained", "steps")
        data = self.model_dump(include=set(keys))
        if self.bytes_processed is not None:
            data["bytes_processed"] = self.bytes_processed
        return data
