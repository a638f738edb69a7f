"""A time window written otherwise than the question's convention is rewritten to the convention's own condition.

The 1.5B model is shown the convention beside the question ("last 30 days: DATE(block_timestamp) >= ... AND
DATE(block_timestamp) < CURRENT_DATE()") and still writes a window of its own in many samples: the one day 30 days
ago (`DATE(block_timestamp) = DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY)`), a window left open on today's incomplete
day (`block_timestamp >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 30 DAY)`). The convention's checks find it, and
a revision asked to fix it often rewrites the rest of the query instead. The convention holds its exact condition
(`condition` in the semantic layer), so the edit is askchain's: in each WHERE, the conditions comparing one time column
with the current date or time become the convention's condition on that column.

The edit is kept only where the convention's checks flagged the query (or, sqlglot unable to parse it, the checks on
its tree could not), it clears their findings, and validation finds nothing new in the result: a query whose WHERE
spans more on purpose (a daily change needs the day before the first one asked about; two periods compared) breaks
another rule when narrowed, and stays as written, for revision."""

from __future__ import annotations

import re
from functools import cache
from typing import Callable, Collection, Sequence

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from askchain.db.dialects import parse_one
from askchain.db.schema import Schema
from askchain.generation.sql_text import Edit, apply_edits
from askchain.rules.analysis import Analysis
from askchain.rules.base import Repair, Repaired
from askchain.semantic.layer import Reading, parsed_tree

#: Tokens that end a WHERE clause at its own depth.
_WHERE_ENDS = {TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.HAVING, TokenType.QUALIFY,
               TokenType.WINDOW, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.SEMICOLON}
#: What a bound relative to now is written with.
_NOW = re.compile(r"\bCURRENT_(DATE|TIMESTAMP|DATETIME)\b|\bNOW\s*\(", re.IGNORECASE)
#: Calls that keep a time column a time (or its date) for a window's comparison.
_AS_TIME = (exp.Date, exp.TsOrDsToDate, exp.Cast, exp.TryCast, exp.Timestamp)
_COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def time_columns(schema: Schema) -> frozenset[str]:
    """The names (lower case) of the schema's columns holding a date or a time."""
    return frozenset(column.name.lower() for table in schema.tables for column in table.columns
                     if re.search(r"DATE|TIME", column.type, re.IGNORECASE))


def conform_windows(sql: str, dialect: str, times: Collection[str], readings: Sequence[Reading],
                    findings: Callable[[str], list[str]]) -> tuple[str, list[str]]:
    """`sql` with its windows written as the question's one time convention that has a condition, and what was
    rewritten; unchanged (no notes) when the question has no such convention or two, the convention's checks pass,
    no WHERE holds a window on one time column, or the rewritten query keeps a finding of the convention or gets one
    that `findings` (the query's validation) did not report before. A query sqlglot cannot parse gives the checks on
    its tree nothing to read: its windows are written as the convention wherever they are written otherwise."""
    windows = [reading for reading in readings if reading.entry.condition]
    if len(windows) != 1:
        return sql, []
    window = windows[0]
    tree = cache(lambda: parsed_tree(sql, dialect))
    if not window.findings(sql, dialect, tree) and tree() is not None:
        return sql, []
    edits = _window_edits(sql, dialect, times, window)
    if not edits:
        return sql, []
    written, notes = apply_edits(sql, edits)
    if written == sql or window.findings(written, dialect) or not set(findings(written)) <= set(findings(sql)):
        return sql, []
    return written, [note for note in notes if note]


def _window_edits(sql: str, dialect: str, times: Collection[str], window: Reading) -> list[Edit]:
    """For each WHERE whose conditions on the current date or time all bound one time column: the first replaced by
    the convention's condition on that column, the others dropped with the AND before them."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return []
    edits: list[Edit] = []
    for conjuncts in _where_conjuncts(tokens):
        bounds = [(first, last, column) for first, last in conjuncts
                  if (column := _bounded_column(sql[tokens[first].start:tokens[last].end + 1], dialect, times))]
        if not bounds or len({column.lower() for *_, column in bounds}) > 1:
            continue
        (first, last, column), rest = bounds[0], bounds[1:]
        condition = window.entry.condition.format(column=column, **window.values)
        written = " AND ".join(" ".join(sql[tokens[a].start:tokens[b].end + 1].split()) for a, b, _ in bounds)
        edits.append((tokens[first].start, tokens[last].end, condition,
                      f"{written} written as {window.entry.name}: {condition}"))
        edits += [(tokens[a - 2].end + 1, tokens[b].end, "", "") for a, b, _ in rest]
    return edits


def _where_conjuncts(tokens: list[Token]) -> list[list[tuple[int, int]]]:
    """For each WHERE clause, its top-level conditions joined by AND, as (first, last) token positions; none for a
    clause with a top-level OR (its ANDs do not join the whole clause)."""
    clauses = []
    for i, token in enumerate(tokens):
        if token.token_type != TokenType.WHERE:
            continue
        depth, start, conjuncts, between, has_or = 0, i + 1, [], False, False
        j = i + 1
        while j < len(tokens):
            kind = tokens[j].token_type
            if kind == TokenType.L_PAREN:
                depth += 1
            elif kind == TokenType.R_PAREN:
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0:
                if kind in _WHERE_ENDS:
                    break
                if kind == TokenType.BETWEEN:
                    between = True
                elif kind == TokenType.AND and between:
                    between = False
                elif kind == TokenType.AND:
                    conjuncts.append((start, j - 1))
                    start = j + 1
                elif kind == TokenType.OR:
                    has_or = True
            j += 1
        conjuncts.append((start, j - 1))
        if not has_or and all(first <= last for first, last in conjuncts):
            clauses.append(conjuncts)
    return clauses


def _bounded_column(text: str, dialect: str, times: Collection[str]) -> str | None:
    """The time column (as written) a condition bounds by the current date or time (`DATE(tt.block_timestamp) >=
    DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY)`, `block_timestamp BETWEEN ... AND CURRENT_DATE()`), else None."""
    try:
        condition = parse_one(text, dialect)
    except SqlglotError:
        return None
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.Between):
        column, bounds = condition.this, [condition.args.get("low"), condition.args.get("high")]
    elif isinstance(condition, _COMPARISONS):
        column, bounds = condition.left, [condition.right]
        if not _time_column(column, times):
            column, bounds = condition.right, [condition.left]
    else:
        return None
    found = _time_column(column, times)
    if found is None or not any(bound is not None and _NOW.search(bound.sql(dialect)) for bound in bounds):
        return None
    return found.sql(dialect)


def _time_column(node: exp.Expression | None, times: Collection[str]) -> exp.Column | None:
    """The column `node` is, maybe inside DATE(...) or a cast, when it holds a date or a time."""
    while isinstance(node, _AS_TIME):
        node = node.this
    return node if isinstance(node, exp.Column) and node.name.lower() in times else None


class ConformWindows(Repair):
    """A time window written as the question's convention's own condition (last: validation judges the rest)."""

    id = "windows"
    order = 110

    def applies(self, analysis: Analysis) -> bool:
        return bool(analysis.readings) and any(reading.entry.condition for reading in analysis.readings) \
            and analysis.errors_of is not None

    def repair(self, analysis: Analysis) -> Repaired:
        return conform_windows(analysis.sql, analysis.dialect, time_columns(analysis.schema), analysis.readings,
                               analysis.errors_of)
