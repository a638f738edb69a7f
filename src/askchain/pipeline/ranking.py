"""A ranked answer shows what it is ranked by: "the busiest hour" is the hour and its count, not the hour alone.

A 1.5B model often ranks by a measure it does not show (`SELECT hour ... ORDER BY COUNT(*) DESC LIMIT 1`); the user
then cannot see why that hour came first, the answer in words cannot say it, and two samples that rank alike but
show different columns fall into different result groups at selection. A domain whose users read answers as an
analyst would (`show_ranking_measure` in its semantic layer) gets each such measure appended to the outermost
projection, as text inserted before the outermost FROM, so the rest stays as the model wrote it."""

from __future__ import annotations

from sqlglot import exp, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one


def show_ranking_measure(sql: str, dialect: str) -> tuple[str, list[str]]:
    """`sql` with the outermost query's first ORDER BY key added to its projection when it does not show it, and what
    was added ("shows the ranking measure AVG(base_fee_per_gas) / 1e9 as avg_base_fee_per_gas"); `sql` unchanged
    (and no notes) when the key is shown, the query is a set operation, DISTINCT or `*`, or sqlglot cannot read it."""
    try:
        tree = parse_one(sql, dialect)
        start = _outer_from(sql, dialect)
    except SqlglotError:
        return sql, []
    if (not isinstance(tree, exp.Select) or tree.args.get("distinct") or not tree.args.get("order") or start is None
            or tree.is_star):
        return sql, []
    key = tree.args["order"].expressions[0].this  # the ranking; later keys only break its ties
    outputs = {e.alias_or_name.lower() for e in tree.expressions}
    if (isinstance(key, exp.Literal) or _unqualified(key) in {_unqualified(e.unalias()) for e in tree.expressions}
            or _names_an_output(key, outputs) or _measure_name(key).lower() in outputs):
        return sql, []
    written, name = key.sql(dialect=dialect), _measure_name(key)
    if isinstance(key, exp.Column):
        added, note = written, f"shows the ranking measure {written}"
    else:
        added, note = f"{written} AS {exp.to_identifier(name).sql(dialect)}", f"shows the ranking measure {written} as {name}"
    head = sql[:start].rstrip()
    return f"{head}, {added}\n{sql[start:]}", [note]


def _outer_from(sql: str, dialect: str) -> int | None:
    """The position of the outermost query's FROM: the first FROM outside parentheses (a WITH clause's queries and
    every subquery are inside them)."""
    depth = 0
    for token in Dialect.get_or_raise(dialect).tokenize(sql):
        if token.token_type == tokens.TokenType.L_PAREN:
            depth += 1
        elif token.token_type == tokens.TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == tokens.TokenType.FROM and depth == 0:
            return token.start
    return None


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


def _measure_name(key: exp.Expression) -> str:
    """A column's own name; an aggregate's function and columns (`avg_base_fee_per_gas`, `count`); else `measure`."""
    if isinstance(key, exp.Column):
        return key.name
    aggregate = key if isinstance(key, exp.AggFunc) else key.find(exp.AggFunc)
    if aggregate is None:
        return "measure"
    columns = [c.name for c in aggregate.find_all(exp.Column)]
    return "_".join([aggregate.key.lower(), *columns])
