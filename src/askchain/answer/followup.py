"""Follow-ups ("and only for USDT?") rewritten into self-contained questions, so every later stage sees one question."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from askchain.llm.base import ChatModel
from askchain.prompt_data import escape_text, quote_data
from askchain.prompts import load_prompt

#: Earlier turns shown to the rewriter; older ones rarely matter and cost context.
HISTORY_TURNS = 4
MAX_QUESTION_CHARS = 1000
#: An earlier answer shown to the rewriter: its paragraph and how the question was read; a longer one is cut.
MAX_ANSWER_CHARS = 600

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
        lines += history_lines(number, turn)
    messages = load_prompt("askchain.answer", "rewrite").render(history="\n".join(lines), question=question)
    reply = model.complete(messages, temperature=0.0, max_tokens=120).text
    return clean_rewrite(reply) or question


def history_lines(number: int, turn: Turn) -> list[str]:
    """One earlier turn, each part on its own line: the answer in words repeats stored values, so it is a quoted
    string (data, not instructions), and the question and SQL (whose literals may be copied values) are kept to one
    line each, so no value can start a line that reads as another turn or as the follow-up."""
    lines = [f"Q{number}: {escape_text(turn.question)}"]
    if turn.sql:
        lines.append(f"SQL{number}: {escape_text(' '.join(turn.sql.split()))}")
    lines.append(f"A{number}: {quote_data(turn.answer, MAX_ANSWER_CHARS)}")
    return lines


def clean_rewrite(reply: str) -> str:
    """The first non-empty line of the reply, without a label or surrounding quotes."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip().strip("\"'`").strip()
    return line[:MAX_QUESTION_CHARS]
