"""Conditions taken out of a WHERE where they are written, each with the AND that joined it: shared by the repairs
that drop a condition (a share's own, a flag nobody asked for), so the rest of the model's text stays."""

from __future__ import annotations

from typing import Callable

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from askchain.db.dialects import parse_one
from askchain.generation.sql_text import apply_edits, condition_span
from askchain.rules.sql import condition_key, conjuncts


def drop_conditions(sql: str, dialect: str, at: int, keys: list[str],
                    why: Callable[[str], str]) -> tuple[str, list[str]] | None:
    """`sql` with the conditions of these keys (`condition_key`) dropped from the WHERE of its `at`-th SELECT, one at
    a time (two neighbours dropped at once would share their AND), and the notes (`why` of each condition's SQL);
    None unless each is found as written."""
    notes = []
    for key in keys:
        where = list(parse_one(sql, dialect).find_all(exp.Select))[at].args["where"]
        condition = next((c for c in conjuncts(where.this) if condition_key(c, dialect) == key), None)
        if condition is None:
            return None
        while isinstance(condition.parent, exp.Paren):  # as written, in its parentheses
            condition = condition.parent
        anchor = next((node.meta["start"] for node in condition.find_all(exp.Identifier) if "start" in node.meta), -1)
        span = condition_span(Dialect.get_or_raise(dialect).tokenize(sql), condition, anchor, dialect)
        if span is None:
            return None
        sql, note = apply_edits(sql, [(*span, "", why(condition.sql(dialect)))])
        notes += note
    return sql, notes
