"""A series over time is listed in time order unless the question ranks or orders it: "the average fullness for each
of the last 7 days" is read day after day, not from the fullest day down.

A 1.5B model ends many grouped queries with `ORDER BY <the measure> DESC` by habit. The rows are the ones asked for,
but in an order nobody asked for, so the sample falls into a result group of its own at selection and the answer
reads as a ranking. The semantic generator lists a series in time order by construction
(askchain.generation.semantic_fit.series_in_time_order); this is the same convention for free SQL. Where the
outermost query groups by one expression of a time column, has no LIMIT (a top N is a ranking) and orders first by
another key, on a question with no word that ranks or orders ("most", "highest", "sorted"),
its ORDER BY is rewritten to the time expression, as the query names it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from askchain.db.schema import Schema
from askchain.generation.semantic_fit import RANKS
from askchain.generation.sql_text import apply_edits
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.rules.repairs.windows import time_columns
from askchain.rules.sql import bare_sql, tokens_with_depth

#: Tokens that end an ORDER BY clause at its own depth.
_ORDER_ENDS = {TokenType.LIMIT, TokenType.SEMICOLON, TokenType.OFFSET, TokenType.FETCH}


def in_time_order(sql: str, schema: Schema, question: str, tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` ordered by its one time grouping (see above) and the note; `sql` unchanged (and no notes) where the
    question ranks or orders, the query is no such series, or sqlglot cannot read it.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    dialect = schema.dialect
    tree = readable(sql, dialect, tree) if not RANKS.search(question) else None
    if not isinstance(tree, exp.Select) or tree.args.get("limit") or not tree.args.get("order") \
            or not tree.args.get("group"):
        return sql, []
    shown = {e.alias.lower(): e.this for e in tree.expressions if isinstance(e, exp.Alias)}
    keys = time_keys(tree, time_columns(schema))
    if len(keys) != 1:
        return sql, []
    key = keys[0]
    grouped = bare_sql(shown.get(_name(key), key), dialect)  # what the key groups by, past an output's alias
    aliases = [alias for alias, expression in shown.items() if bare_sql(expression, dialect) == grouped]
    if bare_sql(tree.args["order"].expressions[0].this, dialect) in {bare_sql(key, dialect), grouped, *aliases}:
        return sql, []
    written = aliases[0] if aliases else key.sql(dialect)
    span = _order_span(sql, dialect)
    if span is None:
        return sql, []
    return apply_edits(sql, [(*span, f"ORDER BY {written}",
                              f"ordered the series by {written}: the question ranks nothing")])


def _name(key: exp.Expression) -> str:
    """The name a bare column key goes by (an output's alias, where it is one); "" for an expression."""
    return key.name.lower() if isinstance(key, exp.Column) and not key.table else ""


def time_keys(select: exp.Select, times: frozenset[str]) -> list[exp.Expression]:
    """The keys a SELECT groups by that are a time column or a function of one (its date, hour, week), not an
    aggregate; a key naming an output is read as the output's expression."""
    group = select.args.get("group")
    shown = {e.alias.lower(): e.this for e in select.expressions if isinstance(e, exp.Alias)}
    return [key for key in (group.expressions if group else [])
            if not (expression := shown.get(_name(key), key)).find(exp.AggFunc)
            and any(column.name.lower() in times for column in expression.find_all(exp.Column))]


def _order_span(sql: str, dialect: str) -> tuple[int, int] | None:
    """The characters of the outermost ORDER BY clause (first and last, inclusive); None without one."""
    try:
        found = tokens_with_depth(sql, dialect)
    except SqlglotError:
        return None
    start, end = None, None
    for token, depth in found:
        if start is not None and depth == 0 and token.token_type in _ORDER_ENDS:
            break
        if start is None and depth == 0 and token.token_type == TokenType.ORDER_BY:
            start = token.start
        if start is not None:
            end = token.end
    return (start, end) if start is not None else None


@dataclass(frozen=True)
class SeriesInTimeOrder(Repair):
    """A series over time ordered by something else, where the question ranks nothing, put in time order."""

    id = "series_in_time_order"
    order = 45

    def repair(self, analysis: Analysis) -> Repaired:
        return in_time_order(analysis.sql, analysis.schema, analysis.asked, analysis.parsed_or_none(analysis.dialect))
