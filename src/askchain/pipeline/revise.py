"""Execution-guided revision: pending -> executed (never the same SQL twice) -> failed or success; each failed
query is revised by the LLM as a minimal edit with its error or empty result, for at most `rounds` rounds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Literal

from askchain.db.base import QueryResult
from askchain.generation.candidates import Candidate
from askchain.generation.context import GenerationContext
from askchain.generation.sql_text import END_OF_SQL_BLOCK, extract_sql
from askchain.llm.base import ChatModel
from askchain.rules.base import Findings
from askchain.prompt_data import escape_text, quote_error

Status = Literal["success", "empty", "error", "invalid"]


@dataclass
class Execution:
    candidate: Candidate
    result: QueryResult | None
    error: str | None
    findings: Findings
    status: Status

    @property
    def failed(self) -> bool:
        return self.status != "success"

    def record(self) -> dict:
        """The execution as stored in traces and evaluation results."""
        return {
            "sql": self.candidate.sql, "generator": self.candidate.generator, "status": self.status, "error": self.error,
            "rows": len(self.result.rows) if self.result else 0, "round": self.candidate.round,
            "votes": self.candidate.votes, "warnings": self.findings.warnings,
            "repairs": list(self.candidate.repairs),
            "rules": self.rules(),
        }

    def rules(self) -> list[str]:
        """The ids of the rules that acted on the candidate: the repairs that changed it, the checks that found
        something (`askchain eval rules` reads them from traces)."""
        found = {finding.rule for finding in self.findings.found if finding.rule}
        return sorted(found | set(self.candidate.repaired_by))

    def problem(self) -> str:
        """What is wrong, for the revision prompt: the database's error message quoted, validation's findings (which
        may quote stored values) kept on one line."""
        if self.status == "invalid":
            return escape_text(self.findings.summary())
        if self.status == "error":
            return f"it fails with: {quote_error(self.error)}"
        return "it runs but returns no rows; check filters and stored values (spelling, case, format)"


def empty_majority(executions: list[Execution], share: float) -> bool:
    """Whether the first round's samples returning no rows hold more than `share` of its votes: then no rows is what
    the samples agree on, and a revision that makes rows appear answers a different question. Never beside a
    governed query (one whose reading says what it measured) that ran to rows and is not doubted: the layer's window
    found the rows the empty samples missed."""
    first = [ex for ex in executions if ex.candidate.round == 0]
    if any(ex.status == "success" and ex.candidate.reading and not ex.candidate.doubt for ex in first):
        return False
    empty = sum(ex.candidate.votes for ex in first if ex.status == "empty")
    return empty > share * sum(ex.candidate.votes for ex in first)


def promise(ex: Execution) -> tuple[int, int, int]:
    """How near a failure is to an answer, the most promising first: the query more samples wrote, then the one with
    fewer problems to fix, then the shorter. Every Ethereum answer a revision turned right in the whole-split runs
    had a right revision of the first failure in this order (docs/benchmarks.md), so the budget goes there first."""
    problems = len(ex.findings.errors) if ex.status == "invalid" else 1
    return -ex.candidate.votes, problems, len(ex.candidate.sql)


def execute_candidates(
    candidates: list[Candidate],
    validate: Callable[[str], Findings],
    execute: Callable[[str], "tuple[QueryResult | None, str | None]"],
    workers: int = 4,
) -> list[Execution]:
    """Validate each candidate; run the valid ones in parallel; statically broken ones are not run. A failure inside
    validating or running one candidate (a bug, whatever the model wrote) is recorded on that candidate as invalid
    or error, and the others go on."""
    from askchain.errors import describe

    def run(cand: Candidate) -> Execution:
        try:
            findings = validate(cand.sql)
        except Exception as exc:  # noqa: BLE001 - one candidate's failure must not end the question
            problem = f"validation failed: {describe(exc)}"
            return Execution(cand, None, problem, Findings(errors=[problem]), "invalid")
        if not findings.ok:
            return Execution(cand, None, findings.summary(), findings, "invalid")
        try:
            result, error = execute(cand.sql)
            if error:
                return Execution(cand, None, error, findings, "error")
            return Execution(cand, result, None, findings, "success" if result.rows else "empty")
        except Exception as exc:  # noqa: BLE001 - as above
            return Execution(cand, None, f"execution failed: {describe(exc)}", findings, "error")

    if len(candidates) <= 1:
        return [run(c) for c in candidates]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run, candidates))


def revise_all(failed: list[Execution], ctx: GenerationContext, model: ChatModel, seed: int, round_no: int,
               repair: Callable[[Candidate], Candidate] = lambda candidate: candidate,
               shorten: Callable[[str], str] = lambda text: text) -> list[Candidate]:
    """Each failed query revised as a minimal edit with its problem (and repaired by the domain's rules, as the
    draft's). The query and its problem are shown as the prompts teach the model to write (`shorten`: the domain's
    shorthands), so it copies the short form. The prompts share the context's prefix, so a provider that decodes
    prompts side by side revises them all for little more than one."""
    replies = model.complete_many(
        [ctx.messages("askchain.pipeline", "revise", sql=shorten(ex.candidate.sql), problem=shorten(ex.problem()))
         for ex in failed],
        temperature=0.0 if round_no == 1 else 0.5, max_tokens=320, stop=END_OF_SQL_BLOCK, seed=seed + round_no,
    )
    return [
        repair(Candidate(
            extract_sql(reply.text), f"{ex.candidate.generator.split('+')[0]}+revision", parent=ex.candidate.sql,
            round=round_no, votes=ex.candidate.votes,  # the fix stands for every sample that wrote the broken query
        ))
        for ex, reply in zip(failed, replies)
    ]


def revision_loop(
    candidates: list[Candidate],
    *,
    ctx: GenerationContext,
    model: ChatModel,
    key: Callable[[str], str],
    validate: Callable[[str], Findings],
    execute: Callable[[str], "tuple[QueryResult | None, str | None]"],
    rounds: int,
    max_revisions: int,
    empty_answer_share: float,
    revise_beside_rows: bool,
    seed: int,
    on_round: Callable[[int, list[Execution]], None] | None = None,
    known: list[Execution] = (),
    repair: Callable[[Candidate], Candidate] = lambda candidate: candidate,
    shorten: Callable[[str], str] = lambda text: text,
) -> list[Execution]:
    """Every execution made, in order; revision stops when nothing failed, the rounds or the budget run out. The
    budget goes to the most promising failures first (`promise`).

    `known` are executions made earlier (e.g. of draft candidates): they are not run again, and the failed
    ones are revised in the first round with the rest. A known query also among `candidates` takes its votes there.
    A revision that comes back as a failed query already run leaves its failure open: it is revised again next round
    (later rounds sample at a higher temperature), instead of ending the loop with budget left. When the first
    round's votes are mostly on an empty result (`empty_majority`), that is the answer and nothing is revised: no
    revision could outvote it. Without `revise_beside_rows`, nothing is revised once a first-round query returned
    rows: the vote is among those that did. The budget and its rules (`rounds`, `max_revisions`,
    `empty_answer_share`, `revise_beside_rows`) and `seed` are the settings' (pipeline, llm): no default here can
    differ from settings.yaml's.
    """
    votes = {key(c.sql): c.votes for c in candidates}
    known = [replace(ex, candidate=replace(ex.candidate, votes=votes.get(key(ex.candidate.sql), ex.candidate.votes))) for ex in known]
    executed: dict[str, Execution] = {key(ex.candidate.sql): ex for ex in known}
    pending: list[Candidate] = candidates
    # revised_from[i]: the failure pending[i] is a revision of (None for the first round's candidates)
    revised_from: list[Execution | None] = [None] * len(pending)
    revisions = 0
    for round_no in range(rounds + 1):
        fresh, unresolved = [], []
        for cand, source in zip(pending, revised_from):
            k = key(cand.sql)
            if k in executed or k in {key(c.sql) for c in fresh}:
                if source is not None and k in executed and executed[k].failed:
                    unresolved.append(source)  # the fix repeats a failed query: still open
                continue
            fresh.append(cand)
        results = execute_candidates(fresh, validate, execute)
        if round_no == 0:
            results = list(known) + results
        for ex in results:
            executed.setdefault(key(ex.candidate.sql), ex)
        if on_round:
            on_round(round_no, results)
        failed = unresolved + [ex for ex in results if ex.failed]
        if round_no == 0 and (empty_majority(results, empty_answer_share)
                              or not revise_beside_rows and any(ex.status == "success" for ex in results)):
            break
        if round_no == rounds or not failed or revisions >= max_revisions:
            break
        failed = sorted(failed, key=promise)[: max_revisions - revisions]
        revisions += len(failed)
        pending = revise_all(failed, ctx, model, seed, round_no + 1, repair, shorten)
        revised_from = list(failed)  # revise_all returns one revision per failure, in order
    return list(executed.values())
