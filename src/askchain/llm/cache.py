"""An on-disk response cache, so a repeated evaluation with the same seed costs almost nothing."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path


class ResponseCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, samples TEXT NOT NULL)")
        self._lock = threading.Lock()

    def get(self, key: str) -> list[dict] | None:
        with self._lock:
            row = self._db.execute("SELECT samples FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, samples: list[dict]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, json.dumps(samples)))
