"""Conversation threads in a SQLite file: each turn keeps its question, SQL, a sample of rows, the answer, its
confidence and, when it was planned, its steps."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from askchain.answer.followup import Turn

#: Rows kept per turn: enough to show the result again in the history, not a copy of the result.
STORED_ROWS = 100

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    thread_id  TEXT NOT NULL,
    turn       INTEGER NOT NULL,
    created_at REAL NOT NULL,
    record     TEXT NOT NULL,
    PRIMARY KEY (thread_id, turn)
)
"""


@dataclass
class TurnRecord:
    question: str  # as typed
    asked: str  # the self-contained question that was answered (differs for follow-ups)
    db: str
    sql: str | None
    answer: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    row_count: int = 0
    error: str | None = None
    run_id: str | None = None
    #: a question answered in steps: each step's question, SQL, error and row count
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: how sure the answer was: level, reasons and the alternatives shown beside a low one
    confidence: dict[str, Any] | None = None
    created_at: float = 0.0
    turn: int = 0

    def as_turn(self) -> Turn:
        return Turn(self.asked, self.sql, self.answer)


class ThreadStore:
    """Append-only turns per thread id; safe to share between worker threads and across restarts."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        with closing(self._connect()) as conn, conn:
            conn.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def append(self, thread_id: str, record: TurnRecord) -> TurnRecord:
        """Store the next turn of `thread_id`, numbering it; rows beyond STORED_ROWS are dropped."""
        record.rows = record.rows[:STORED_ROWS]
        record.created_at = record.created_at or time.time()
        with self._lock, closing(self._connect()) as conn, conn:
            (last,) = conn.execute("SELECT coalesce(max(turn), 0) FROM turns WHERE thread_id = ?", (thread_id,)).fetchone()
            record.turn = last + 1
            payload = json.dumps(asdict(record), default=str)
            conn.execute("INSERT INTO turns VALUES (?, ?, ?, ?)", (thread_id, record.turn, record.created_at, payload))
        return record

    def turns(self, thread_id: str) -> list[TurnRecord]:
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT record FROM turns WHERE thread_id = ? ORDER BY turn", (thread_id,)).fetchall()
        return [TurnRecord(**json.loads(r[0])) for r in rows]

    def history(self, thread_id: str) -> list[Turn]:
        """The turns a follow-up may refer to: those that produced SQL."""
        return [t.as_turn() for t in self.turns(thread_id) if t.sql]
