"""Selection: group successful candidates by execution result; if groups disagree, either the largest group wins
(`vote`) or a round-robin pairwise tournament judged by the LLM picks the one that answers the question
(`tournament`, ties broken by group size). Which pays depends on the judge: the 1.5B model's verdicts follow
the candidates' positions, not their correctness (docs/benchmarks.md), so its default is the vote."""

from __future__ import annotations

import itertools

from dataclasses import dataclass, field
from typing import Literal, Sequence

from pydantic import BaseModel
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one
from askchain.generation.candidates import result_preview
from askchain.generation.context import GenerationContext
from askchain.llm.base import ChatModel
from askchain.pipeline.revise import Execution, empty_majority


@dataclass
class Group:
    members: list[Execution]
    score: float = 0.0

    @property
    def representative(self) -> Execution:
        # an original candidate over a revision, then one that says what it measured (a governed query's reading),
        # then the shortest SQL
        return min(self.members, key=lambda ex: (ex.candidate.round, not ex.candidate.reading, len(ex.candidate.sql)))

    @property
    def votes(self) -> int:
        """Samples behind the group's result: duplicates of one query count, which is what makes a majority."""
        return sum(ex.candidate.votes for ex in self.members)

    @property
    def doubted(self) -> bool:
        """Whether every candidate behind the result is doubted (askchain.generation.semantic_doubt)."""
        return all(ex.candidate.doubt for ex in self.members)

    @property
    def generators(self) -> list[str]:
        return sorted({ex.candidate.generator for ex in self.members})


@dataclass
class Selection:
    chosen: Execution | None
    groups: list[Group] = field(default_factory=list)
    matches: list[dict] = field(default_factory=list)
    reason: str = ""


class Verdict(BaseModel):
    winner: Literal["A", "B"]


def _normal(value):
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value if isinstance(value, (int, str, type(None))) else str(value)


def orders_rows(sql: str, dialect: str) -> bool:
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return False
    return bool(tree and tree.args.get("order"))


def result_signature(ex: Execution, dialect: str) -> tuple:
    return rows_signature(ex.result.rows, ex.candidate.sql, dialect)


def rows_signature(rows: Sequence[Sequence], sql: str, dialect: str) -> tuple:
    """Rows as compared for equal results: values normalised, in order only where the query orders them."""
    normal = [tuple(_normal(v) for v in row) for row in rows]
    return tuple(normal if orders_rows(sql, dialect) else sorted(normal, key=repr))


def group_by_result(executions: list[Execution], dialect: str, with_empty: bool = False) -> list[Group]:
    """Successful executions grouped by equal result, most votes first, and at equal votes one not doubted before one
    that is; `with_empty` counts no rows as a result."""
    counted = {"success", "empty"} if with_empty else {"success"}
    groups: dict[tuple, Group] = {}
    for ex in executions:
        if ex.status in counted:
            groups.setdefault(result_signature(ex, dialect), Group([])).members.append(ex)
    return sorted(groups.values(), key=lambda g: (-g.votes, g.doubted))


def select_best(
    executions: list[Execution],
    *,
    ctx: GenerationContext,
    model: ChatModel,
    method: Literal["vote", "tournament"],
    max_groups: int = 4,
    majority_margin: float = 0.0,
    empty_answer_share: float = 1.0,
    seed: int = 42,
) -> Selection:
    """`majority_margin` > 0 skips the tournament when the largest group has that many times the next one's votes.
    An empty result competes like any other when the first round's votes are mostly on it (`empty_majority`)."""
    groups = group_by_result(executions, ctx.dialect, with_empty=empty_majority(executions, empty_answer_share))
    if not groups:
        return Selection(best_failure(executions), [], [], "no candidate succeeded")
    if len(groups) == 1:
        return Selection(groups[0].representative, groups, [], "all successful candidates agree")
    if method == "vote":
        return Selection(groups[0].representative, groups, [], "majority vote")
    top = groups[:max_groups]
    if majority_margin and top[0].votes >= majority_margin * top[1].votes:
        return Selection(top[0].representative, groups, [], "clear majority")
    matches = []
    for i, (a, b) in enumerate(itertools.combinations(range(len(top)), 2)):
        first, second = (a, b) if i % 2 == 0 else (b, a)  # alternate positions against order bias
        ex_a, ex_b = top[first].representative, top[second].representative
        verdict = model.complete(
            ctx.messages(
                "askchain.pipeline", "judge",
                sql_a=ex_a.candidate.sql, sql_b=ex_b.candidate.sql,
                rows_a=len(ex_a.result.rows), rows_b=len(ex_b.result.rows),
                preview_a=result_preview(ex_a.result), preview_b=result_preview(ex_b.result),
            ),
            temperature=0.0, max_tokens=12, response_model=Verdict, seed=seed,
        ).parsed[0]
        winner = None if verdict is None else (first if verdict.winner == "A" else second)
        if winner is not None:
            top[winner].score += 1
        matches.append({"a": ex_a.candidate.sql, "b": ex_b.candidate.sql, "winner": ["A", "B"][winner == second] if winner is not None else None})
    best = max(top, key=lambda g: (g.score, g.votes))
    return Selection(best.representative, groups, matches, "tournament")


def best_failure(executions: list[Execution]) -> Execution | None:
    """Nothing succeeded: prefer a query that ran (empty result) over one that failed, later rounds first."""
    if not executions:
        return None
    rank = {"empty": 0, "error": 1, "invalid": 2, "success": 0}
    return min(executions, key=lambda ex: (rank[ex.status], -ex.candidate.round))
