"""A ranked answer shows what it is ranked by: "the busiest hour" is the hour and its count, not the hour alone.

A 1.5B model often ranks by a measure it does not show (`SELECT hour ... ORDER BY COUNT(*) DESC LIMIT 1`); the user
then cannot see why that hour came first, the answer in words cannot say it, and two samples that rank alike but
show different columns fall into different result groups at selection. A domain whose users read answers as an
analyst would (`show_ranking_measure` in its semantic layer) gets each such measure appended to the outermost
projection, as text inserted after its last item, so the rest stays as the model wrote it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from askchain.rules.amounts import amounts_kept
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.rules.sql import tokens_with_depth


def show_ranking_measure(sql: str, dialect: str, raw_units: Collection[str] = (),
                         tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` with the outermost query's first ORDER BY key added to its projection when it does not show it, and what
    was added ("shows the ranking measure AVG(base_fee_per_gas) / 1e9 as avg_base_fee_per_gas"); `sql` unchanged
    (and no notes) when the key is shown (alone or inside a projected expression: `value / 1e18 AS eth` shows
    `value`), would show a column of `raw_units` in its base unit (`SUM(value)`: validation would send it back),
    the query is a set operation, `*` or `AS STRUCT`, or sqlglot cannot read it. A DISTINCT query gets its key too:
    GoogleSQL (and PostgreSQL) refuse to order DISTINCT rows by a key they do not show, and DuckDB orders them by an
    arbitrary one of its values.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    tree = readable(sql, dialect, tree)
    if (not isinstance(tree, exp.Select) or tree.args.get("kind") or tree.is_star
            or not tree.args.get("order")):
        return sql, []
    key = tree.args["order"].expressions[0].this  # the ranking; later keys only break its ties
    outputs = {e.alias_or_name.lower() for e in tree.expressions}
    raw = {column.rsplit(".", 1)[-1].lower() for column in raw_units}
    kept_raw = {column.name.lower() for column in amounts_kept(key)}
    name = _measure_name(key, dialect)
    if (not key.find(exp.Column) and not key.find(exp.AggFunc)) or raw & kept_raw or _shown(key, tree.expressions) \
            or _names_an_output(key, outputs) or name.lower() in outputs:
        return sql, []
    try:
        position = _projection_end(sql, dialect)  # tokenized only for a query that needs the measure
    except SqlglotError:
        return sql, []
    if position is None:
        return sql, []
    written = key.sql(dialect=dialect)
    if isinstance(key, exp.Column):
        added, note = written, f"shows the ranking measure {written}"
    else:
        added, note = f"{written} AS {exp.to_identifier(name).sql(dialect)}", f"shows the ranking measure {written} as {name}"
    end, after_comma = position
    return f"{sql[:end]}{' ' if after_comma else ', '}{added}{sql[end:]}", [note]


def _projection_end(sql: str, dialect: str) -> tuple[int, bool] | None:
    """Where the outermost projection's text ends: just after its last token before the outermost FROM (comments
    stay after the insertion), and whether that token is a trailing comma; None without such a FROM, or when FROM
    comes first (DuckDB's `FROM t SELECT ...`)."""
    selected, previous = False, None
    for token, depth in tokens_with_depth(sql, dialect):
        if depth == 0 and token.token_type == TokenType.SELECT:
            selected = True
        elif depth == 0 and token.token_type == TokenType.FROM:
            if not selected or previous is None:
                return None
            return previous.end + 1, previous.token_type == TokenType.COMMA
        previous = token
    return None


def _shown(key: exp.Expression, projections: list[exp.Expression]) -> bool:
    """Whether a projection is the key or contains it (`SUM(value) / 1e18 AS eth` shows `SUM(value)`)."""
    wanted = _unqualified(key)
    return any(_unqualified(node) == wanted for projection in projections for node in projection.unalias().walk())


def _unqualified(expression: exp.Expression) -> str:
    """The expression's SQL without table qualifiers, so `t.hour` and `hour` count as one."""
    bare = expression.copy()
    for column in bare.find_all(exp.Column):
        column.set("table", None)
        column.set("db", None)
        column.set("catalog", None)
    return bare.sql().lower()


def _names_an_output(key: exp.Expression, outputs: set[str]) -> bool:
    """Whether the key reads one of the query's own output names (`ORDER BY events DESC`, `ORDER BY events / 2`):
    shown already, or not something the projection can repeat."""
    return any(not column.table and column.name.lower() in outputs for column in key.find_all(exp.Column))


def _measure_name(key: exp.Expression, dialect: str) -> str:
    """A column's own name; else the function and columns of the one aggregate (`avg_base_fee_per_gas`, `count`) or,
    without one, of the key (`date_block_timestamp`), never a column's bare name, which GROUP BY could read as the
    alias; else `measure` (`SAFE_DIVIDE(SUM(a), COUNT(*))` is neither a sum nor a count)."""
    if isinstance(key, exp.Column):
        return key.name
    aggregates = list(key.find_all(exp.AggFunc))
    function = aggregates[0] if len(aggregates) == 1 else key if not aggregates and isinstance(key, exp.Func) else None
    if function is None:
        return "measure"
    written = function.sql(dialect=dialect).split("(")[0]  # as the dialect names it: COUNT, MY_UDF, APPROX_COUNT_DISTINCT
    return "_".join([written.lower(), *(c.name for c in function.find_all(exp.Column))])


@dataclass(frozen=True)
class RankingMeasure(Repair):
    """A ranked answer shows what it is ranked by (a domain switches it on, naming its columns in base units)."""

    id = "ranking_measure"
    order = 80
    #: "table.column" of the columns stored in a base unit, whose raw measure is not shown.
    in_base_units: tuple[str, ...] = ()

    def repair(self, analysis: Analysis) -> Repaired:
        return show_ranking_measure(analysis.sql, analysis.dialect, self.in_base_units,
                                    analysis.parsed_or_none(analysis.dialect))
