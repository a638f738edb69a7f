"""The Ethereum question bank: verified question/GoogleSQL pairs (bank/*.jsonl), split by template family.

A family groups the paraphrases and parameter variants of one intent. Each pair's `split` is `test` when its family
is held out for evaluation, else `pool`; example retrieval never reads a `test` row, so no sibling of a test question
can be retrieved as an example. bank/README.md states the conventions the pairs follow (time windows, units, shares).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from askchain.errors import DatasetError

BANK_DIR = Path(__file__).parent / "bank"
REQUIRED = ("id", "family", "split", "category", "difficulty", "question", "gold_sql")


def load_bank() -> list[dict]:
    """Every pair, each with its `split`: "test" (a held-out family) or "pool"."""
    return [dict(pair) for pair in _pairs()]


def pool() -> list[dict]:
    """The few-shot example pool: the pairs of every family not held out."""
    return [pair for pair in load_bank() if pair["split"] == "pool"]


def test_split() -> list[dict]:
    """The evaluation set: the pairs of the held-out families."""
    return [pair for pair in load_bank() if pair["split"] == "test"]


@lru_cache(maxsize=1)
def _pairs() -> tuple[dict, ...]:
    pairs = []
    for path in sorted(BANK_DIR.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                pair = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path.name}:{n} is not valid JSON: {exc.msg}") from exc
            missing = [key for key in REQUIRED if not pair.get(key)]
            if missing:
                raise DatasetError(f"{path.name}:{n} lacks {', '.join(missing)}")
            if pair["split"] not in ("pool", "test"):
                raise DatasetError(f"{path.name}:{n} has split {pair['split']!r}: use pool or test")
            pairs.append(pair)
    return tuple(pairs)
