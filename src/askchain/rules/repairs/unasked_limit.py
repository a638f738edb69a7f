"""A LIMIT the question never asked for is dropped: "which symbols are used by more than one contract?" asks for all.

A 1.5B model ends many lists with `LIMIT 10` by habit. The answer then misses rows the user asked for, and samples
that differ only in that habit fall into different result groups at selection. The question says how many rows it
wants when it wants a number of them ("the top 5", "three oldest"): a LIMIT of more than one row on the outermost
query, of a number the question never writes, is taken out where it is written. LIMIT 1 stays (a superlative asks for
one row), as does a LIMIT with an OFFSET (a page), and one where the question leaves the count to the answer ("the
top tokens", "the most recent transactions", "a few examples")."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from askchain.generation.sql_text import apply_edits
from askchain.numbers import SOME_ROWS, question_numbers
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.rules.sql import tokens_with_depth



def drop_unasked_limit(sql: str, dialect: str, question: str,
                       tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` without its outermost LIMIT when that is a number of rows above one the question never writes (see
    above), and the note; `sql` unchanged (and no notes) otherwise or when sqlglot cannot read it.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    if SOME_ROWS.search(question):
        return sql, []
    tree = readable(sql, dialect, tree)
    limit = tree.args.get("limit") if tree is not None else None
    count = limit.expression if isinstance(limit, exp.Limit) else None
    if count is None or not count.is_int or count.to_py() <= 1 or tree.args.get("offset") or \
            count.to_py() in question_numbers(question):
        return sql, []
    found = tokens_with_depth(sql, dialect)  # it parsed: it tokenizes
    tokens = [token for token, _ in found]
    at = max((i for i, (token, depth) in enumerate(found) if depth == 0 and token.token_type == TokenType.LIMIT),
             default=None)
    if at is None or at == 0 or at + 1 >= len(tokens) or tokens[at + 1].text != count.this:
        return sql, []
    return apply_edits(sql, [(tokens[at - 1].end + 1, tokens[at + 1].end, "",
                              f"dropped LIMIT {count.this}: the question asks for every row, not {count.this}")])



class UnaskedLimit(Repair):
    """A LIMIT of a number of rows the question never writes, dropped."""

    id = "unasked_limit"
    order = 40

    def repair(self, analysis: Analysis) -> Repaired:
        return drop_unasked_limit(analysis.sql, analysis.dialect, analysis.asked,
                                  analysis.parsed_or_none(analysis.dialect))
