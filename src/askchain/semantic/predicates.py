"""Structured predicates over a query's parsed tree: what a semantic-layer entry's checks test where a regular
expression over the SQL text is fooled by the text's other parts (`\\b100\\b` is satisfied by `LIMIT 100`, `\\s-\\s`
by a join's `number - 1`, `1e18` by an alias or a comment). A check names them as data (`applies_tree:`,
`requires_tree:`, `forbids_tree:` in askchain.semantic.layer), tested on the candidate's tree as its dialect parses
it.

A predicate is a mapping of one name to its arguments: `{limit: "{n}"}`, `{call: [MEDIAN, APPROX_QUANTILES]}`. The
values a question's pattern captures fill `{n}` and the like in every string argument, as they fill the regular
expressions (write a quantifier's braces twice: `{{8}}`). Most predicates match one node, and hold on a query where
some node of its tree matches (a subquery's included); an argument marked P is itself a predicate, matched on a part
of that node. A NAME is a regular expression, or a list of them, matched against a whole name, case-insensitive.

The library (arguments, then the node each predicate matches):

- `column: NAME`: a column of that name, in any table.
- `table: NAME`: a table of that name read in FROM or JOIN.
- `call: NAME` or `{names: NAME, of: P}`: a call of the function by any name sqlglot reads as it (ARRAY_LENGTH is
  ARRAY_SIZE), whose subject (its first argument as sqlglot reads it) matches `of`.
- `string: PATTERN`: a string literal the pattern matches whole.
- `number: VALUE`: a number literal of that value outside LIMIT and OFFSET.
- `power_of_ten: {exponent: k}` or `{least: k}`: 10^k written as a number (1e18, 1000000) or as POWER(10, k).
- `element: {of: NAME, at: [i, ...]}`: an element of an array column at a 0-based position (OFFSET(i), ORDINAL(i + 1),
  a bare [i]); at any position without `at`.
- `part: NAME`: a date part, EXTRACT(part FROM x) or part(x).
- `interval: {n: n, unit: NAME}`: an interval of n units, alone or as the amount DATE_SUB and its kin shift by (either
  left out: any).
- `days_ago: n`: DATE_SUB(CURRENT_DATE(), INTERVAL n DAY), or CURRENT_DATE() - INTERVAL n DAY.
- `before_today: {}`: a bound leaving today out: `x < CURRENT_DATE()` (or a date, a cast or a truncation to the day or
  more of now), `x <= yesterday`, BETWEEN ... AND yesterday.
- `limit: n`: LIMIT n.
- `grouped: {windows: bool}`: a GROUP BY; with `windows`, also a window's PARTITION BY.
- `group_key: P`: a GROUP BY key matching P.
- `shown: P`: a SELECT list item (its alias aside) or a GROUP BY key matching P.
- `selected: P`: a node matching P inside a SELECT list item, not in a WHERE, JOIN or GROUP BY.
- `compared: {this: P, with: P}`: `a = b` either way round, or `a IN (..., b, ...)`, with a matching `this` and b
  `with` (left out: anything).
- `in_list: [v, ...]`: `x IN (...)` listing exactly these numbers.
- `null_test: {column: NAME, negated: bool}`: `column IS NULL` (negated false), `IS NOT NULL` (true), either (left
  out).
- `division: {of: P, by: P}`: `/`, SAFE_DIVIDE or IEEE_DIVIDE whose numerator holds a node matching `of` and whose
  divisor one matching `by` (left out: any).
- `product: {factor: P, unless: P}`: a product (a whole chain of `*`) with a factor matching `factor` and none
  matching `unless`.
- `subtraction: {}`: a `-` between two values; not a negative number, nor a date minus an INTERVAL.
- `concatenated: {first: P}`: CONCAT(...) or `||` whose first part matches P.
- `formatted: PATTERN`: a date or time formatted (FORMAT_DATE, FORMAT_TIMESTAMP, STRFTIME) with a format the pattern
  is found in.
- `mentions: [word, ...]`: an expression whose SQL, as sqlglot writes it, holds one of the words as a column, unit
  or date part (DATE_TRUNC(d, WEEK)); meant under `group_key` or `shown`, as it writes each node it tests.
- `unnest: {}`: an UNNEST read as a table (FROM, JOIN or a comma), not `x IN UNNEST(...)`.
- `any_of: [P, ...]`: a node matching one of them; on the whole query, one of them holds.
- `all_of: [P, ...]` (on the whole query only): each of them holds, each anywhere.
- `none_of: [P, ...]` (on the whole query only): none of them holds anywhere (what a query never reads).
- `intervals: {distinct: k, unit: NAME}` (on the whole query only): k or more different intervals (amount and unit)
  as `interval` finds them.
"""

from __future__ import annotations

import math
import re
import string
from typing import Any, Callable

from sqlglot import exp

#: Whether a node matches, or a predicate holds on a whole tree.
Test = Callable[[exp.Expression], bool]

#: What each `{value}` is filled with to build a predicate at load: a number, as the patterns capture.
SAMPLE = "7"
#: Calls that shift a date or time by an amount of units (bigquery reads the INTERVAL into their arguments).
_SHIFTS = (exp.DateAdd, exp.DateSub, exp.DatetimeAdd, exp.DatetimeSub, exp.TimestampAdd, exp.TimestampSub,
           exp.TimeAdd, exp.TimeSub)
_NOW = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentDatetime)
_TRUNCATIONS = (exp.DateTrunc, exp.TimestampTrunc, exp.DatetimeTrunc)
_UNDER_A_DAY = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}
_UNITS = {"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"} | _UNDER_A_DAY


class PredicateError(ValueError):
    """A predicate the library does not have, or arguments it does not take."""


def build(spec: Any, values: dict[str, str]) -> Test:
    """The predicate `spec` with the question's `values` filled in, as a test of a whole tree."""
    try:
        filled = _filled(spec, values)
    except (KeyError, IndexError, ValueError) as exc:
        raise PredicateError(f"its placeholders cannot be filled: {exc!r}") from exc
    return _tree_test(filled)


def validate(spec: Any) -> None:
    """Build `spec` as a question would fill it (every placeholder a number): a PredicateError where it cannot be."""
    build(spec, {name: SAMPLE for name in _placeholders(spec)})


def query_or_none(tree: exp.Expression | None) -> exp.Expression | None:
    """`tree`, or None where it holds no query to test (sqlglot's fallback to a bare command)."""
    return None if tree is None or isinstance(tree, exp.Command) else tree


# ---- building -------------------------------------------------------------------------------------------------------

def _filled(spec: Any, values: dict[str, str]) -> Any:
    if isinstance(spec, str):
        return spec.format(**values)
    if isinstance(spec, list):
        return [_filled(item, values) for item in spec]
    if isinstance(spec, dict):
        return {key: _filled(value, values) for key, value in spec.items()}
    return spec


def _placeholders(spec: Any) -> set[str]:
    if isinstance(spec, str):
        try:
            return {name for _, name, _, _ in string.Formatter().parse(spec) if name}
        except ValueError:
            return set()  # unbalanced braces: filling fails and says so
    items = spec.values() if isinstance(spec, dict) else spec if isinstance(spec, list) else ()
    return set().union(*(_placeholders(item) for item in items))


def _one(spec: Any) -> tuple[str, Any]:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise PredicateError(f"a predicate is a mapping of one name to its arguments, not {spec!r}")
    return next(iter(spec.items()))


#: How each combination of whole-query predicates holds.
COMBINATIONS: dict[str, Callable] = {"any_of": any, "all_of": all, "none_of": lambda held: not any(held)}


def _tree_test(spec: Any) -> Test:
    """A predicate on a whole tree: a combination, `intervals`, or a node predicate that some node matches."""
    name, args = _one(spec)
    if name in COMBINATIONS:
        parts = [_tree_test(part) for part in _list(name, args)]
        return lambda tree: COMBINATIONS[name](part(tree) for part in parts)
    if name == "intervals":
        return _intervals(args)
    test = _matcher(spec)
    return lambda tree: any(test(node) for node in tree.walk())


def _matcher(spec: Any) -> Test:
    """A predicate on one node."""
    name, args = _one(spec)
    if name == "any_of":
        parts = [_matcher(part) for part in _list(name, args)]
        return lambda node: any(part(node) for part in parts)
    if name in ("all_of", "none_of", "intervals"):
        raise PredicateError(f"{name} holds on a whole query, not on a node")
    if name not in MATCHERS:
        raise PredicateError(f"unknown predicate {name!r}; the library has {', '.join(sorted(MATCHERS))}, "
                             "any_of, all_of, none_of and intervals")
    return MATCHERS[name](args)


def _optional(spec: Any) -> Test:
    """A node predicate, or one every node matches where none is given."""
    return (lambda node: True) if spec is None else _matcher(spec)


def _fields(name: str, args: Any, allowed: set[str], required: set[str] = frozenset()) -> dict:
    args = {} if args is None else args
    if not isinstance(args, dict):
        raise PredicateError(f"{name} takes a mapping of {sorted(allowed)}, not {args!r}")
    if unknown := set(args) - allowed:
        raise PredicateError(f"{name} takes no {sorted(unknown)}; it takes {sorted(allowed)}")
    if missing := required - set(args):
        raise PredicateError(f"{name} needs {sorted(missing)}")
    return args


def _list(name: str, args: Any) -> list:
    if not isinstance(args, list) or not args:
        raise PredicateError(f"{name} takes a list, not {args!r}")
    return args


def _names(name: str, value: Any) -> re.Pattern:
    """A NAME argument: one regular expression or a list, any of which matches a whole name."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(item, str) for item in items):
        raise PredicateError(f"{name} takes a name or a list of names, not {value!r}")
    return _compiled(name, "|".join(f"(?:{item})" for item in items))


def _compiled(name: str, pattern: Any) -> re.Pattern:
    if not isinstance(pattern, str):
        raise PredicateError(f"{name} takes a regular expression, not {pattern!r}")
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise PredicateError(f"{name} has a bad pattern {pattern!r}: {exc}") from exc


def _int(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise PredicateError(f"{name} takes a whole number, not {value!r}")


def _float(name: str, value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise PredicateError(f"{name} takes a number, not {value!r}") from None


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise PredicateError(f"{name} takes true or false, not {value!r}")
    return value


# ---- reading nodes --------------------------------------------------------------------------------------------------

def _bare(node: exp.Expression | None) -> exp.Expression | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _outer(node: exp.Expression) -> exp.Expression | None:
    """The node's parent, past parentheses."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return parent


def _value(node: exp.Expression | None) -> float | None:
    """The value of a number literal; None for anything else."""
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    try:
        return float(node.this)
    except ValueError:
        return None


def _called(node: exp.Expression, names: re.Pattern) -> bool:
    """Whether the node calls a function by one of `names`, its own or any sqlglot reads as the same function."""
    if isinstance(node, exp.Anonymous):
        return bool(names.fullmatch(node.name))
    return isinstance(node, exp.Func) and any(names.fullmatch(name) for name in node.sql_names())


def _subject(node: exp.Expression) -> exp.Expression | None:
    """A call's first argument as sqlglot reads it (`this`, else the first of its arguments)."""
    this = None if isinstance(node, exp.Anonymous) else node.args.get("this")
    if isinstance(this, exp.Expression):
        return this
    return node.expressions[0] if node.expressions else None


def _unit(node: exp.Expression | None) -> str | None:
    """A date unit's name in upper case and the singular (DAY, WEEK for WEEK(MONDAY)); None where there is none."""
    if isinstance(node, exp.WeekStart):
        return "WEEK"
    if not isinstance(node, (exp.Var, exp.Literal)):
        return None
    name = str(node.this).strip().upper()
    return name[:-1] if name.endswith("S") and name[:-1] in _UNITS else name


def _interval_of(node: exp.Expression) -> tuple[int | None, str | None] | None:
    """The amount (None unless a whole number) and unit of an INTERVAL, or of what DATE_SUB and its kin shift by;
    None for any other node."""
    if isinstance(node, exp.Interval):
        amount, unit = node.this, node.args.get("unit")
    elif isinstance(node, _SHIFTS) and not isinstance(node.expression, exp.Interval):
        amount, unit = node.expression, node.args.get("unit")
    else:
        return None
    text = str(amount.this).strip() if isinstance(amount, exp.Literal) else ""
    return (int(text) if text.isdigit() else None), _unit(unit)


# ---- the node predicates --------------------------------------------------------------------------------------------

def _column(args: Any) -> Test:
    names = _names("column", args)
    return lambda node: isinstance(node, exp.Column) and bool(names.fullmatch(node.name))


def _table(args: Any) -> Test:
    names = _names("table", args)
    return lambda node: isinstance(node, exp.Table) and bool(names.fullmatch(node.name))


def _call(args: Any) -> Test:
    if not isinstance(args, dict):
        names = _names("call", args)
        return lambda node: _called(node, names)
    args = _fields("call", args, {"names", "of"}, {"names"})
    names, of = _names("call", args["names"]), _optional(args.get("of"))
    return lambda node: _called(node, names) and (subject := _subject(node)) is not None and of(_bare(subject))


def _string(args: Any) -> Test:
    pattern = _compiled("string", args)
    return lambda node: isinstance(node, exp.Literal) and node.is_string and bool(pattern.fullmatch(node.this))


def _number(args: Any) -> Test:
    value = _float("number", args)
    return lambda node: _value(node) == value and node.find_ancestor(exp.Limit, exp.Offset) is None


def _power_of_ten(args: Any) -> Test:
    args = _fields("power_of_ten", args, {"exponent", "least"})
    if ("exponent" in args) == ("least" in args):
        raise PredicateError("power_of_ten takes either exponent or least")
    if "exponent" in args:
        exponent = _int("power_of_ten", args["exponent"])
        return lambda node: _exponent(node) == exponent
    least = _int("power_of_ten", args["least"])
    return lambda node: (found := _exponent(node)) is not None and found >= least


def _exponent(node: exp.Expression) -> int | None:
    """k where the node is 10^k (k >= 1) written as a number or as POWER(10, k)."""
    if isinstance(node, exp.Pow):
        base, power = _value(node.this), _value(node.expression)
        return int(power) if base == 10 and power is not None and power == int(power) and power >= 1 else None
    value = _value(node)
    if value is None or value < 10 or math.isinf(value):
        return None
    exponent = round(math.log10(value))
    return exponent if float(10 ** exponent) == value else None


def _element(args: Any) -> Test:
    args = _fields("element", args, {"of", "at"}, {"of"})
    names = _names("element", args["of"])
    at = args.get("at")
    positions = None if at is None else {_int("element", i) for i in (at if isinstance(at, list) else [at])}

    def test(node: exp.Expression) -> bool:
        if not isinstance(node, exp.Bracket) or not isinstance(node.this, exp.Column) \
                or not names.fullmatch(node.this.name):
            return False
        return positions is None or _position(node) in positions
    return test


def _position(bracket: exp.Bracket) -> int | None:
    """The 0-based position a subscript reads: OFFSET(i) and a bare [i] read i, ORDINAL(i) reads i - 1."""
    index = _value(bracket.expressions[0]) if len(bracket.expressions) == 1 else None
    if index is None or index != int(index):
        return None
    return int(index) - int(bracket.args.get("offset") or 0)


def _part(args: Any) -> Test:
    names = _names("part", args)
    return lambda node: bool(names.fullmatch(node.this.name)) if isinstance(node, exp.Extract) \
        else _called(node, names)


def _interval(args: Any) -> Test:
    args = _fields("interval", args, {"n", "unit"})
    n = _int("interval", args["n"]) if "n" in args else None
    units = _names("interval", args["unit"]) if "unit" in args else None

    def test(node: exp.Expression) -> bool:
        found = _interval_of(node)
        return found is not None and (n is None or found[0] == n) \
            and (units is None or (found[1] is not None and bool(units.fullmatch(found[1]))))
    return test


def _days_ago(args: Any) -> Test:
    n = _int("days_ago", args)
    return lambda node: _is_days_ago(node, n)


def _is_days_ago(node: exp.Expression | None, n: int) -> bool:
    node = _bare(node)
    if isinstance(node, exp.DateSub):
        return isinstance(_bare(node.this), exp.CurrentDate) and _interval_of(node) == (n, "DAY")
    if isinstance(node, exp.Sub) and isinstance(_bare(node.this), exp.CurrentDate):
        return isinstance(node.expression, exp.Interval) and _interval_of(node.expression) == (n, "DAY")
    return False


def _before_today(args: Any) -> Test:
    _fields("before_today", args, set())

    def test(node: exp.Expression) -> bool:
        if isinstance(node, (exp.LT, exp.GT)):
            return _today(node.expression if isinstance(node, exp.LT) else node.this)
        if isinstance(node, (exp.LTE, exp.GTE)):
            return _is_days_ago(node.expression if isinstance(node, exp.LTE) else node.this, 1)
        return isinstance(node, exp.Between) and _is_days_ago(node.args.get("high"), 1)
    return test


def _today(node: exp.Expression | None) -> bool:
    """Whether the node is the start of today: CURRENT_DATE(), a date of now, the current date as a time, or now
    truncated to the day or more."""
    node = _bare(node)
    if isinstance(node, exp.CurrentDate):
        return True
    inner = _bare(node.this) if isinstance(node, exp.Expression) else None
    if isinstance(node, (exp.Date, exp.TsOrDsToDate)):
        return isinstance(inner, _NOW)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return isinstance(inner, exp.CurrentDate) or (isinstance(inner, _NOW) and node.to.is_type("date"))
    if isinstance(node, (exp.Timestamp, exp.TsOrDsToDatetime)):
        return isinstance(inner, exp.CurrentDate)
    if isinstance(node, _TRUNCATIONS):
        return isinstance(inner, _NOW) and _unit(node.args.get("unit")) not in _UNDER_A_DAY
    return False


def _limit(args: Any) -> Test:
    n = _int("limit", args)
    return lambda node: isinstance(node, exp.Limit) and _value(node.expression) == n


def _grouped(args: Any) -> Test:
    windows = _bool("grouped", _fields("grouped", args, {"windows"}).get("windows", False))
    return lambda node: isinstance(node, exp.Group) or \
        (windows and isinstance(node, exp.Window) and bool(node.args.get("partition_by")))


def _group_key(args: Any) -> Test:
    test = _matcher(args)
    return lambda node: isinstance(node.parent, exp.Group) and node.arg_key == "expressions" and test(node)


def _shown(args: Any) -> Test:
    test = _matcher(args)

    def shown(node: exp.Expression) -> bool:
        item = node.parent if isinstance(node.parent, exp.Alias) else node
        return item.arg_key == "expressions" and isinstance(item.parent, (exp.Select, exp.Group)) and test(node)
    return shown


def _selected(args: Any) -> Test:
    test = _matcher(args)

    def selected(node: exp.Expression) -> bool:
        if not test(node):
            return False
        child, parent = node, node.parent
        while parent is not None and not isinstance(parent, exp.Select):
            child, parent = parent, parent.parent
        return parent is not None and child.arg_key == "expressions"
    return selected


def _compared(args: Any) -> Test:
    args = _fields("compared", args, {"this", "with"}, {"this"})
    this, other = _matcher(args["this"]), _optional(args.get("with"))

    def test(node: exp.Expression) -> bool:
        if isinstance(node, exp.EQ):
            a, b = _bare(node.this), _bare(node.expression)
            return (this(a) and other(b)) or (this(b) and other(a))
        if isinstance(node, exp.In) and node.expressions:
            subject, values = _bare(node.this), [_bare(value) for value in node.expressions]
            return (this(subject) and any(map(other, values))) or (other(subject) and any(map(this, values)))
        return False
    return test


def _in_list(args: Any) -> Test:
    wanted = sorted(_float("in_list", value) for value in _list("in_list", args))

    def test(node: exp.Expression) -> bool:
        if not isinstance(node, exp.In) or not node.expressions:
            return False
        values = [_value(_bare(value)) for value in node.expressions]
        return None not in values and sorted(values) == wanted
    return test


def _null_test(args: Any) -> Test:
    args = _fields("null_test", args, {"column", "negated"}, {"column"})
    names = _names("null_test", args["column"])
    negated = _bool("null_test", args["negated"]) if "negated" in args else None

    def test(node: exp.Expression) -> bool:
        column = _bare(node.this) if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null) else None
        if not isinstance(column, exp.Column) or not names.fullmatch(column.name):
            return False
        return negated is None or isinstance(_outer(node), exp.Not) == negated
    return test


def _division(args: Any) -> Test:
    args = _fields("division", args, {"of", "by"})
    of, by = _optional(args.get("of")), _optional(args.get("by"))

    def test(node: exp.Expression) -> bool:
        if isinstance(node, (exp.Div, exp.SafeDivide)):
            numerator, divisor = node.this, node.expression
        elif isinstance(node, exp.Anonymous) and node.name.upper() == "IEEE_DIVIDE" and len(node.expressions) == 2:
            numerator, divisor = node.expressions
        else:
            return False
        return any(map(of, numerator.walk())) and any(map(by, divisor.walk()))
    return test


def _product(args: Any) -> Test:
    args = _fields("product", args, {"factor", "unless"}, {"factor"})
    factor = _matcher(args["factor"])
    unless = _matcher(args["unless"]) if args.get("unless") is not None else (lambda node: False)

    def test(node: exp.Expression) -> bool:
        if not isinstance(node, exp.Mul) or isinstance(_outer(node), exp.Mul):
            return False
        factors = _factors(node)
        return any(map(factor, factors)) and not any(map(unless, factors))
    return test


def _factors(node: exp.Expression) -> list[exp.Expression]:
    node = _bare(node)
    return _factors(node.this) + _factors(node.expression) if isinstance(node, exp.Mul) else [node]


def _subtraction(args: Any) -> Test:
    _fields("subtraction", args, set())
    return lambda node: isinstance(node, exp.Sub) and \
        not any(isinstance(_bare(side), exp.Interval) for side in (node.this, node.expression))


def _concatenated(args: Any) -> Test:
    first = _matcher(_fields("concatenated", args, {"first"}, {"first"})["first"])

    def test(node: exp.Expression) -> bool:
        if isinstance(node, exp.Concat) or (isinstance(node, exp.Anonymous) and node.name.upper() == "CONCAT"):
            return bool(node.expressions) and first(_bare(node.expressions[0]))
        if not isinstance(node, exp.DPipe):
            return False
        while isinstance(_bare(node), exp.DPipe):
            node = _bare(node).this
        return first(_bare(node))
    return test


def _formatted(args: Any) -> Test:
    pattern = _compiled("formatted", args)

    def test(node: exp.Expression) -> bool:
        if isinstance(node, exp.TimeToStr):
            form = node.args.get("format")
        elif isinstance(node, exp.Anonymous) and re.fullmatch(r"FORMAT_(DATE|DATETIME|TIMESTAMP|TIME)", node.name,
                                                              re.IGNORECASE):
            form = node.expressions[0] if node.expressions else None
        else:
            return False
        return isinstance(form, exp.Literal) and form.is_string and bool(pattern.search(form.this))
    return test


def _mentions(args: Any) -> Test:
    words = [args] if isinstance(args, str) else args
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w.isidentifier() for w in words):
        raise PredicateError(f"mentions takes a list of words, not {args!r}")
    pattern = re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)
    return lambda node: bool(pattern.search(node.sql()))


def _unnest(args: Any) -> Test:
    _fields("unnest", args, set())
    return lambda node: isinstance(node, exp.Unnest) and isinstance(node.parent, (exp.From, exp.Join))


#: The node predicates by name, each made from its arguments.
MATCHERS: dict[str, Callable[[Any], Test]] = {
    "column": _column, "table": _table, "call": _call, "string": _string, "number": _number,
    "power_of_ten": _power_of_ten, "element": _element, "part": _part, "interval": _interval,
    "days_ago": _days_ago, "before_today": _before_today, "limit": _limit, "grouped": _grouped,
    "group_key": _group_key, "shown": _shown, "selected": _selected, "compared": _compared, "in_list": _in_list,
    "null_test": _null_test, "division": _division, "product": _product, "subtraction": _subtraction,
    "concatenated": _concatenated, "formatted": _formatted, "mentions": _mentions, "unnest": _unnest,
}


def _intervals(args: Any) -> Test:
    args = _fields("intervals", args, {"distinct", "unit"}, {"distinct"})
    distinct = _int("intervals", args["distinct"])
    units = _names("intervals", args["unit"]) if "unit" in args else None

    def test(tree: exp.Expression) -> bool:
        found = {interval for node in tree.walk() if (interval := _interval_of(node)) and interval[0] is not None
                 and (units is None or (interval[1] is not None and units.fullmatch(interval[1])))}
        return len(found) >= distinct
    return test
