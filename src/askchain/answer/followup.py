"""Follow-ups ("and only for USDT?") rewritten into self-contained questions, so every later stage sees one question."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from askchain.llm.base import ChatModel
from askchain.prompts import load_prompt

#: Earlier turns shown to the rewriter; older ones rarely matter and cost context.
HISTORY_TURNS = 4
MAX_QUESTION_CHARS = 1000

_PREFIX = re.compile(r"^(self-contained question|rewritten question|question)\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    """What a later question may refer to: the question answered, its SQL and the answer in words."""

    question: str
    sql: str | None
    answer: str


def rewrite_followup(question: str, history: Sequence[Turn], model: ChatModel) -> str:
    """The question made self-contained using `history`; with no history it is returned as is, without a model call."""
    if not history:
        return question
    lines = []
    for number, turn in enumerate(history[-HISTORY_TURNS:], 1):
        lines.append(f"Q{number}: {turn.question}")
        if turn.sql:
            lines.append(f"SQL{number}: {' '.join(turn.sql.split())}")
        lines.append(f"A{number}: {turn.answer}")
    messages = load_prompt("askchain.answer", "rewrite").render(history="\n".join(lines), question=question)
    reply = model.complete(messages, temperature=0.0, max_tokens=120).text
    return clean_rewrite(reply) or question


def clean_rewrite(reply: str) -> str:
    """The first non-empty line of the reply, without a label or surrounding quotes."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip().strip("\"'`").strip()
    return line[:MAX_QUESTION_CHARS]
