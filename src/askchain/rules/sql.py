"""What rules ask of an expression, whatever rule asks: its conditions, its quotient, its constant, its SQL as a
finding quotes it, and close spellings of a name."""

from __future__ import annotations

import difflib
import math

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

def did_you_mean(name: str, choices: list[str]) -> str:
    """Close spellings, and names contained in each other (`timestamp` for `block_timestamp`)."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    close += [c for c in lowered if len(c) > 2 and (c in name.lower() or name.lower() in c) and c not in close]
    return f"; did you mean {', '.join(lowered[c] for c in close[:3])}?" if close else ""


def owned_nodes(select: exp.Select, projection: exp.Expression, kind: type[exp.Expression]):
    """The projection's `kind` nodes of this SELECT itself, not of a subquery or inside a window."""
    return (node for node in projection.find_all(kind) if node.find_ancestor(exp.Select, exp.Window) is select)


def owned_by(select: exp.Select, projection: exp.Expression, kind: type[exp.Expression]) -> bool:
    """Whether the projection holds a `kind` node of this SELECT itself, not of a subquery or inside a window."""
    return next(owned_nodes(select, projection, kind), None) is not None


def conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    """The conditions ANDed at the top of `condition`, parentheses around each taken off."""
    condition = condition.unnest()
    return [c.unnest() for c in condition.flatten()] if isinstance(condition, exp.And) else [condition]


def condition_key(condition: exp.Expression, dialect: str) -> str:
    """A condition however written: `x = TRUE` and `x IS TRUE` are `x`; columns without their tables."""
    condition = condition.unnest()
    if isinstance(condition, (exp.EQ, exp.Is)):
        sides = [condition.this, condition.expression]
        others = [side for side in sides if not (isinstance(side, exp.Boolean) and side.this is True)]
        if len(others) == 1:
            condition = others[0]
    return bare_sql(condition, dialect)


def bare_sql(expression: exp.Expression, dialect: str) -> str:
    """An expression's SQL with its columns named without their tables, so `l.topics` and `topics` compare equal."""
    return unqualified_sql(expression, dialect).lower()


def unqualified_sql(expression: exp.Expression, dialect: str) -> str:
    """An expression's SQL with its columns named without their tables, as a finding quotes it to the reviser."""
    bare = expression.copy().transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
    return bare.unnest().sql(dialect=dialect)


COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In)


def quotient(node: exp.Expression) -> tuple[exp.Expression, exp.Expression] | None:
    """A division's part and whole (`a / b`, `SAFE_DIVIDE(a, b)`, `IEEE_DIVIDE(a, b)`); None for anything else."""
    if isinstance(node, (exp.Div, exp.SafeDivide)):
        return node.this, node.expression
    if isinstance(node, exp.Anonymous) and node.name.upper() == "IEEE_DIVIDE" and len(node.expressions) == 2:
        return node.expressions[0], node.expressions[1]
    return None


def is_zero(expression: exp.Expression | None) -> bool:
    return expression is None or isinstance(expression, exp.Null) or \
        isinstance(expression, exp.Literal) and expression.name in {"0", "0.0"}


def as_count(expression: exp.Expression) -> exp.Expression:
    """An amount as the rows it counts: scaling by a number, casts and parentheses taken off, `SUM(1)` and
    `COUNT(1)` as `COUNT(*)`."""
    expression = expression.unnest()
    while True:
        if isinstance(expression, exp.Mul) and isinstance(expression.this.unnest(), exp.Literal):
            expression = expression.expression.unnest()
        elif isinstance(expression, exp.Mul) and isinstance(expression.expression.unnest(), exp.Literal):
            expression = expression.this.unnest()
        elif isinstance(expression, (exp.Cast, exp.TryCast)):
            expression = expression.this.unnest()
        else:
            break
    if isinstance(expression, exp.Sum) and isinstance(expression.this.unnest(), exp.Literal) and \
            expression.this.unnest().name == "1" or \
            isinstance(expression, exp.Count) and isinstance(expression.this.unnest(), exp.Literal):
        return exp.Count(this=exp.Star())
    return expression


def columns_against_literals(comparison: exp.Expression) -> list[tuple[exp.Column, str]]:
    """The (column, text) pairs a comparison compares, either way round (`x IN (a, b)` compares x with a and with b;
    `x LIKE 'a%'` compares x with its pattern); other operands (`LOWER(col)`) are skipped."""
    if isinstance(comparison, exp.In):
        pairs = [(comparison.this, other) for other in comparison.expressions]
    else:
        pairs = [(comparison.this, comparison.expression)]
    return [
        (column, literal.this)
        for one, other in pairs
        for column, literal in ((one, other), (other, one))
        if isinstance(column, exp.Column) and isinstance(literal, exp.Literal) and literal.is_string
    ]


def is_word(text: str) -> bool:
    """Text a number never equals: it has letters and is not itself a number (`'1e3'`)."""
    try:
        float(text)
    except ValueError:
        return any(ch.isalpha() for ch in text)
    return False


def inner_join_keys(select: exp.Expression) -> set[tuple[str, str]]:
    """The columns (table, name; lower case) a select's inner joins match on with `=`: no row it reads is NULL there.
    None of them (an empty set) when a right or full join brings unmatched rows back."""
    joins = select.args.get("joins") or []
    if any(join.side in ("RIGHT", "FULL") for join in joins):
        return set()
    keys = set()
    for join in joins:
        on = join.args.get("on")
        if join.side or join.kind not in ("", "INNER") or on is None:
            continue
        for condition in conjuncts(on):
            if isinstance(condition, exp.EQ):
                keys.update((side.table.lower(), side.name.lower())
                            for side in (condition.left, condition.right) if isinstance(side, exp.Column))
    return keys


def weighed(comparison: exp.Expression) -> list[tuple[exp.Expression, exp.Expression]]:
    """The (amount, figure) pairs a comparison weighs, either way round; BETWEEN weighs its operand against both ends."""
    if isinstance(comparison, exp.Between):
        return [(comparison.this, comparison.args["low"]), (comparison.this, comparison.args["high"])]
    return [(comparison.left, comparison.right), (comparison.right, comparison.left)]


#: The arithmetic a constant expression may hold.
ARITHMETIC = {exp.Mul: lambda a, b: a * b, exp.Div: lambda a, b: a / b, exp.Add: lambda a, b: a + b,
              exp.Sub: lambda a, b: a - b, exp.Pow: lambda a, b: a ** b}


def constant(node: exp.Expression) -> float | None:
    """The (finite, real) number a constant expression makes (`10 * 1e18`, `POWER(10, 18)`, `CAST(1e18 AS
    NUMERIC)`); None for anything that reads a column or calls another function."""
    if isinstance(node, (exp.Paren, exp.Cast, exp.TryCast)):
        return constant(node.this)
    if isinstance(node, exp.Neg):
        inner = constant(node.this)
        return -inner if inner is not None else None
    if type(node) in ARITHMETIC:
        left, right = constant(node.this), constant(node.expression)
        try:
            value = ARITHMETIC[type(node)](left, right) if left is not None and right is not None else None
        except (ArithmeticError, ValueError):
            return None
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
    return literal_number(node)


def literal_number(node: exp.Expression) -> float | None:
    """The number a plain numeric literal writes; None for anything else."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    return None


def tokens_with_depth(sql: str, dialect: str) -> list[tuple[Token, int]]:
    """Each token of `sql` with its parenthesis depth, a parenthesis counted with what it opens (`(` at 1, its `)`
    back at 0): the tokens at depth 0 other than a parenthesis are the outermost query's own clauses, where a repair
    edits the text as written. Raises sqlglot's TokenError where `sql` does not tokenize."""
    depth, found = 0, []
    for token in Dialect.get_or_raise(dialect).tokenize(sql):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        found.append((token, depth))
    return found
