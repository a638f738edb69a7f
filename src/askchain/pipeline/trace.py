"""A run's trace: every stage's inputs, outputs, tokens and seconds, saved as JSON and printable by run id."""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from askchain.errors import AskchainError


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:8]


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@dataclass
class Trace:
    run_id: str
    question: str
    db: str
    method: str
    model: str
    stages: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, stage: str, seconds: float, usage: dict[str, Any], **data: Any) -> None:
        with self._lock:
            self.stages.append({"stage": stage, "seconds": round(seconds, 3), "usage": usage, **_jsonable(data)})

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "question": self.question, "db": self.db, "method": self.method,
            "model": self.model, "stages": self.stages,
        }

    def save(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.run_id}.json"
        path.write_text(json.dumps(self.as_dict(), indent=1, default=str))
        return path


def load_trace(directory: Path, run_id: str) -> dict[str, Any]:
    if not run_id.replace("-", "").isalnum():
        raise AskchainError(f"'{run_id}' is not a run id")
    path = directory / f"{run_id}.json"
    if not path.is_file():
        raise AskchainError(f"no trace for run {run_id} in {directory}")
    return json.loads(path.read_text())
