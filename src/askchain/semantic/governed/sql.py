"""Readable GoogleSQL from the semantic layer's output: light rewrites of the SQL Ibis writes, with sqlglot.

Ibis nests a subquery per step (filter, derived columns, aggregate, order) and names tables t0, t1, ...; the user
reads the SQL, so it is flattened into one SELECT where sqlglot's optimizer can merge it, LEFT JOINs a query does not
use are dropped (a view joins one-to-one, so they change no row), and tables are written as BigQuery names them. Each
rewrite keeps the query's meaning; none writes SQL of its own.
"""

from __future__ import annotations

import math
import re

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.merge_subqueries import merge_subqueries
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify

DIALECT = "bigquery"
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def readable_sql(sql: str, schema: dict) -> str:
    """The query Ibis wrote for BigQuery, flattened and tidied; `schema` maps catalog -> dataset -> table -> column
    -> GoogleSQL type (for expanding `SELECT *` and telling text from numbers)."""
    tree = sqlglot.parse_one(sql, read=DIALECT).transform(_plain_division).transform(_plain_truth)
    tree = pushdown_projections(qualify(tree, schema=schema, dialect=DIALECT))
    tree = merge_subqueries(_lift_final_order(tree))
    tree = pushdown_projections(_drop_unused_left_joins(tree))
    tree = annotate_types(tree, schema=schema, dialect=DIALECT)
    tree = tree.transform(_safe_text_cast).transform(_power_of_ten)
    _name_tables(tree)
    _drop_redundant_aliases(tree)
    return as_analysts_write(tree.sql(dialect=DIALECT, pretty=True))


def as_analysts_write(sql: str) -> str:
    """`CURRENT_DATE()` and `INTERVAL 7 DAY` as the bank's GoogleSQL writes them (sqlglot writes `CURRENT_DATE` and
    `INTERVAL '7' DAY`, the same in GoogleSQL): the same query reads the same to the user and to the domain's checks,
    which read the text. Only the compiler's own output (and earlier steps' queries composed into it) passes here,
    where no string literal holds these words."""
    sql = _QUOTED_INTERVAL.sub(r"INTERVAL \1 \2", sql)
    return _BARE_CURRENT_DATE.sub("CURRENT_DATE()", sql)


_QUOTED_INTERVAL = re.compile(r"INTERVAL '(\d+)' ([A-Z]+)\b")
_BARE_CURRENT_DATE = re.compile(r"\bCURRENT_DATE\b(?!\s*\()")


def _lift_final_order(tree: exp.Expression) -> exp.Expression:
    """`SELECT cols FROM (aggregate) WHERE .. ORDER BY .. LIMIT n` as one SELECT: sqlglot never merges an aggregate
    into the query around it, but one that only filters, orders and limits its columns is the aggregate with that
    filter as HAVING (on the aggregates themselves), ordered by its output names."""
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("group"):
        return tree
    source = tree.args.get("from_") and tree.args["from_"].this
    if not isinstance(source, exp.Subquery) or not isinstance(source.this, exp.Select):
        return tree
    inner = source.this
    if any(inner.args.get(key) for key in ("order", "limit", "offset", "having")):
        return tree
    by_name = {projection.alias_or_name: projection for projection in inner.selects}
    outer_parts = [*tree.selects, tree.args.get("where"), tree.args.get("order")]
    outer_columns = [column.name for part in outer_parts if part for column in part.find_all(exp.Column)]
    if not all(name in by_name for name in outer_columns) \
            or not all(isinstance(p.unalias(), exp.Column) for p in tree.selects):
        return tree
    lifted = inner.copy()
    lifted.set("expressions", [by_name[p.unalias().name].copy() for p in tree.selects])
    if tree.args.get("with_"):  # the tables both read (a comparison's two periods read one)
        lifted.set("with_", tree.args["with_"].copy())
    if tree.args.get("where"):
        condition = tree.args["where"].this.transform(
            lambda node: by_name[node.name].unalias().copy() if isinstance(node, exp.Column) else node)
        lifted.set("having", exp.Having(this=condition))
    for key in ("order", "limit", "offset"):
        if tree.args.get(key):
            lifted.set(key, tree.args[key].transform(_unqualified).copy())
    return lifted


def _unqualified(node: exp.Expression) -> exp.Expression:
    return exp.column(node.name, quoted=node.this.quoted) if isinstance(node, exp.Column) else node


def _drop_unused_left_joins(tree: exp.Expression) -> exp.Expression:
    """LEFT JOINs whose table no column outside their own ON reads: a view joins one-to-one, so each adds nothing."""
    for select in list(tree.find_all(exp.Select)):
        for join in list(select.args.get("joins") or []):
            if join.side != "LEFT" or not isinstance(join.this, exp.Table):
                continue
            alias = join.this.alias_or_name
            on = join.args.get("on")
            used = [column for column in select.find_all(exp.Column) if column.table == alias
                    and not (on and _inside(column, on))]
            if not used:
                join.pop()
    return tree


def _inside(node: exp.Expression, ancestor: exp.Expression) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _safe_text_cast(node: exp.Expression) -> exp.Expression:
    """A number read from a text column (token amounts, decimals, withdrawal amounts) is SAFE_CAST, as the bank
    writes it: a malformed or oversized value is NULL rather than an error for the whole query."""
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast) and node.this.type \
            and node.this.type.is_type(*exp.DataType.TEXT_TYPES):
        return exp.TryCast(this=node.this, to=node.args["to"])
    return node


def _plain_division(node: exp.Expression) -> exp.Expression:
    """Ibis's IEEE_DIVIDE(a, b) as `a / b` when b is a non-zero number, else SAFE_DIVIDE (NULL, not an error, for
    an empty group); one inside another's numerator too (a sum in ETH divided by the periods of a window), which a
    transform does not visit once it replaces the outer one."""
    if isinstance(node, exp.Anonymous) and node.name.lower() == "ieee_divide" and len(node.expressions) == 2:
        numerator, denominator = (part.transform(_plain_division) for part in node.expressions)
        if _nonzero(denominator):
            return exp.Div(this=_wrapped(numerator), expression=_wrapped(denominator))
        return exp.func("SAFE_DIVIDE", numerator, denominator, dialect=DIALECT)
    return node


def _plain_truth(node: exp.Expression) -> exp.Expression:
    """`(a IS NULL) = TRUE` as `a IS NULL`, `(NOT a IS NULL) = FALSE` as `a IS NULL`: Ibis writes a filter on a
    boolean dimension as a comparison with a truth value, which means the condition itself (or its negation) in
    three-valued logic too; a boolean column compared with one (`is_erc20 = TRUE`) is left as written."""
    if not isinstance(node, exp.EQ) or not isinstance(node.expression, exp.Boolean):
        return node
    condition = node.this.unnest()
    if not isinstance(condition, (exp.Predicate, exp.Not, exp.Connector)):
        return node
    if node.expression.this:
        return condition
    return condition.this.unnest() if isinstance(condition, exp.Not) else exp.not_(condition)


def _nonzero(node: exp.Expression) -> bool:
    """A number other than zero, or a power of one (10 to a token's decimals)."""
    if isinstance(node, exp.Pow):
        return _nonzero(node.this)
    return node.is_number and float(node.name) != 0


def _wrapped(node: exp.Expression) -> exp.Expression:
    return exp.paren(node, copy=False) if isinstance(node, exp.Binary) and not isinstance(node, exp.Func) else node


def _power_of_ten(node: exp.Expression) -> exp.Expression:
    """1e+18 and 1000000000.0 (as Ibis writes wei conversions) as 1e18 and 1e9."""
    if isinstance(node, exp.Literal) and node.is_number and not node.name.isdigit():
        value = float(node.name)
        exponent = round(math.log10(value)) if value >= 1e6 else None
        if exponent is not None and value == 10.0 ** exponent:
            return exp.Literal.number(f"1e{exponent}")
    return node


def _name_tables(tree: exp.Expression) -> None:
    """Tables as BigQuery writes them (`project.dataset.table` in one quoted name), aliased by their own name where
    a query reads several, and unaliased (its columns unqualified) where it reads one."""
    tables = [table for table in tree.find_all(exp.Table) if table.args.get("db")]
    unnests = list(tree.find_all(exp.Unnest))
    single = len(tables) == 1 and not unnests
    elements = {_unnest_alias(unnest): _element_name(unnest) for unnest in unnests if _unnest_alias(unnest)}
    renames = {}
    for table in tables:
        old = table.alias_or_name
        new = table.name if table.name not in renames.values() else f"{table.name}_{len(renames)}"
        renames[old] = None if single else new
        qualified = ".".join(part.name for part in table.parts)
        table.set("this", exp.to_identifier(qualified, quoted=True))
        table.set("db", None)
        table.set("catalog", None)
        table.set("alias", None if single else exp.TableAlias(this=exp.to_identifier(new)))
    for unnest in unnests:
        if _unnest_alias(unnest):
            unnest.set("alias", exp.TableAlias(columns=[exp.to_identifier(elements[_unnest_alias(unnest)])]))
    for column in list(tree.find_all(exp.Column)):
        if column.name in elements:  # an UNNEST's element, qualified by the qualifier as `_0.element`
            column.replace(exp.column(elements[column.name]))
        elif column.table in renames:
            new = renames[column.table]
            column.set("table", exp.to_identifier(new) if new else None)
    for identifier in tree.find_all(exp.Identifier):
        if identifier.quoted and _PLAIN_NAME.match(identifier.name):
            identifier.set("quoted", False)


def _unnest_alias(unnest: exp.Unnest) -> str:
    """The name an UNNEST's element goes by (BigQuery aliases it as a column)."""
    alias = unnest.args.get("alias")
    columns = alias.columns if alias else []
    return columns[0].name if columns else ""


def _element_name(unnest: exp.Unnest) -> str:
    """An unnested array's element named after the array (`withdrawals` -> `withdrawal`)."""
    array = unnest.expressions[0] if unnest.expressions else None
    name = array.name if isinstance(array, exp.Column) else "element"
    return name[:-1] if name.endswith("s") else f"{name}_element"


def _drop_redundant_aliases(tree: exp.Expression) -> None:
    """`x AS x` as `x`."""
    for alias in list(tree.find_all(exp.Alias)):
        if isinstance(alias.this, exp.Column) and alias.this.name == alias.alias:
            alias.replace(alias.this)
