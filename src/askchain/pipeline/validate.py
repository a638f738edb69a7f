"""Static checks before execution: parse, hallucinated tables/columns/functions, joins off the key graph,
aggregates mixed with plain columns, grouped results that do not show their groups, one expression under two
names, shares of the rows a filter already keeps, divisions by 1, a number column compared with words, arrays used
as values, amounts shown in a base unit (wei) or compared with a figure too small to be meant in it, SELECT *.
Errors send a candidate to revision instead of the database."""

from __future__ import annotations

import difflib
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, NamedTuple, TypeVar

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.qualify_columns import validate_qualify_columns
from sqlglot.optimizer.scope import Scope, build_scope, traverse_scope
from sqlglot.schema import MappingSchema

from askchain.db.dialects import column_type, is_numeric, parse_one
from askchain.db.schema import SHORTENED, Column, Schema, Table
from askchain.errors import describe, first_line
from askchain.numbers import NUMBER, value_of
from askchain.semantic.layer import Unit

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Findings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        return "; ".join(self.errors + self.warnings)


# Dialects that reject a non-aggregated column beside an aggregate without GROUP BY (SQLite accepts it).
STRICT_GROUP_BY = {"bigquery", "postgres", "duckdb"}


def sqlglot_schema(schema: Schema) -> MappingSchema:
    """The schema as sqlglot's nested mapping, keyed by the names queries use (qualified where they are) and typed
    with the columns' declared types (qualification needs them to see the fields of an UNNESTed struct array)."""

    def columns(table) -> dict:
        return {c.name: column_type(c.type, schema.dialect) for c in table.columns}

    mapping: dict = {}
    for table in schema.tables:
        parts = table.display_name.split(".")
        node = mapping
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = columns(table)
    depth = max(len(t.display_name.split(".")) for t in schema.tables) if schema.tables else 1
    if any(len(t.display_name.split(".")) != depth for t in schema.tables):
        mapping = {t.name: columns(t) for t in schema.tables}
    return MappingSchema(mapping, dialect=schema.dialect, normalize=schema.dialect != "bigquery")


def validate_sql(sql: str, schema: Schema, known_functions: set[str] | None = None,
                 units: Mapping[str, Unit] | None = None, question: str = "") -> Findings:
    """Findings about a query, never an exception. `units` maps "table.column" (lower case) to the column's
    base unit (wei, how to show it in ETH, the least figure meant in it, the scales amounts are written in), from the
    domain's semantic layer; `question` is what the query answers, whose amounts its figures must be (in every unit)
    and whose unit, where it asks for one ("in gwei"), a raw amount may show.

    SQL sqlglot cannot parse is a syntax error (whatever the parser raised: the guard would refuse the query anyway),
    and a check that fails inside (a bug, or a construct sqlglot cannot follow) is logged and becomes a warning while
    the other checks' findings stand, so what the model writes cannot stop a question.

    The checks that resolve names against the schema work on the qualified tree (every column tied to its source);
    those about what the author wrote (their output names, SELECT *, the query's shape) read the written tree,
    since qualification names every output and expands stars."""
    findings = Findings()
    try:
        written = parse_one(sql, schema.dialect)
    except SqlglotError as exc:
        findings.errors.append(f"syntax error: {first_line(exc)}")
        return findings
    if written is None:
        findings.errors.append("empty query")
        return findings

    _guarded(findings, _check_tables, written, schema, findings)
    if findings.errors:
        return findings
    tree = _guarded(findings, _qualify, written, schema, findings) or written
    if known_functions is not None:
        _guarded(findings, _check_functions, written, known_functions, findings)
    _guarded(findings, _check_aggregates, written, schema.dialect, findings)
    _guarded(findings, _check_limits_on_one_row, written, schema.dialect, findings)
    _guarded(findings, _check_repeated_expressions, written, schema.dialect, findings)
    _guarded(findings, _check_shares_of_the_filter, written, schema.dialect, findings)
    _guarded(findings, _check_divisions_by_one, written, schema.dialect, findings)
    _guarded(findings, _check_and_or_precedence, written, schema.dialect, findings)
    _guarded(findings, _check_groups_shown, written, schema.dialect, findings)
    _guarded(findings, _check_text_against_numbers, tree, schema, findings)
    _guarded(findings, _check_arrays_as_values, tree, schema, findings)
    _guarded(findings, _check_literal_shapes, tree, schema, findings)
    _guarded(findings, _check_nulls_an_inner_join_drops, tree, findings)
    _guarded(findings, _check_record_fields, tree, schema, findings)
    if units:
        shown = {column: unit for column, unit in units.items() if not unit.asked_in(question)}  # raw: as asked
        _guarded(findings, _check_raw_amounts, tree, schema, shown, findings)
        _guarded(findings, _check_amounts_against_tiny_figures, tree, schema, shown, findings)
        _guarded(findings, _check_figures_the_question_gives, tree, schema, units, question, findings)
    _guarded(findings, _check_joins, tree, schema, findings)
    _guarded(findings, _check_star, written, findings)
    _guarded(findings, _check_shortened_literals, written, findings)
    return findings


def _guarded(findings: Findings, check: Callable[..., T], *args) -> T | None:
    """Run one check; a failure inside it is recorded as a warning instead of losing the other checks' findings.
    A check sqlglot cannot carry out on a construct (it cannot build the query's scopes) is skipped: the checks are
    best effort, and the database judges what they cannot."""
    step = check.__name__.strip("_")
    try:
        return check(*args)
    except SqlglotError as exc:
        log.debug("validation step %s skipped: %s", step, first_line(exc))
    except Exception as exc:  # noqa: BLE001 - any bug in one check, whatever its type
        message = f"validation step {step} failed: {describe(exc)}"
        log.warning(message)
        log.debug(message, exc_info=exc)
        findings.warnings.append(message)
    return None


def _check_tables(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        name = ".".join(p.name for p in table.parts)
        if table.name.lower() not in ctes and schema.table(name) is None:
            findings.errors.append(f"table {name} does not exist" + _did_you_mean(table.name, [t.name for t in schema.tables]))


def _qualify(written: exp.Expression, schema: Schema, findings: Findings) -> exp.Expression | None:
    """The written tree with every column tied to its source, or None where sqlglot cannot qualify it (the checks
    then read the written tree); a column no source has is an error."""
    try:
        tree = qualify(written.copy(), schema=sqlglot_schema(schema), dialect=schema.dialect,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
    except OptimizeError as exc:
        findings.errors.append(_unresolved_column(str(exc), written, written, schema))
        return None
    except SqlglotError:
        return None  # qualification is best effort on constructs sqlglot cannot resolve
    try:
        validate_qualify_columns(tree)
    except OptimizeError as exc:
        findings.errors.append(_unresolved_column(str(exc), tree, written, schema))
    return tree


def _check_functions(tree: exp.Expression, known_functions: set[str], findings: Findings) -> None:
    for func in tree.find_all(exp.Anonymous):
        if func.name.lower() not in known_functions:
            findings.errors.append(f"function {func.name}() does not exist")


def _check_star(tree: exp.Expression, findings: Findings) -> None:
    if any(isinstance(s, exp.Star) for s in (tree.selects if isinstance(tree, exp.Select) else [])):
        findings.warnings.append("SELECT * returns every column; select only the columns asked for")


def _check_shortened_literals(tree: exp.Expression, findings: Findings) -> None:
    """A literal copied from the schema prompt's shortened example value ('0x00000000000000ad…'): no stored value
    ends so, so the filter finds nothing."""
    for literal in tree.find_all(exp.Literal):
        if literal.is_string and literal.this.endswith(SHORTENED):
            findings.errors.append(f"'{literal.this}' is a shortened example from the schema, not a stored value: "
                                   "use the full value (or the name it stands for) or drop the filter")
            return


UNRESOLVED_COLUMN = re.compile(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)")


def _unresolved_column(message: str, tree: exp.Expression, written: exp.Expression, schema: Schema) -> str:
    """sqlglot's bare "could not be resolved", told the way a reviser can act on: the tables of the SELECT that
    lack the column and their closest columns (a small model often puts a column in the wrong table, e.g.
    `block_timestamp` in blocks, whose time column is `timestamp`). Only when no column there is close does it
    name the tables that have it: pointing at them makes the reviser join a table the question does not need.
    `tree` is the (qualified) tree to search, `written` the query as written, for the column's spelling."""
    found = UNRESOLVED_COLUMN.search(message)
    if not found:
        return message.splitlines()[0].split(". Line:")[0]
    wanted = (found.group(1) or found.group(2)).lower()
    name = next((c.name for c in written.find_all(exp.Column) if c.name.lower() == wanted), wanted)
    lacking, reasons = {}, []
    spelled = {identifier.name.lower(): identifier.name for identifier in written.find_all(exp.Identifier)}
    for scope in traverse_scope(tree):
        tables = _tables_only(_scope_tables(scope, schema))
        for column in scope.columns:
            if column.name.lower() != wanted:
                continue
            searched = [tables.get(column.table.lower())] if column.table else list(tables.values())
            searched = [t for t in searched if t is not None]
            if searched and all(t.column(wanted) is None for t in searched):
                lacking.update({t.name: t for t in searched})
            reasons += filter(None, [_why_unreadable(scope, column, tables, schema, spelled)])
    text = f"Column '{name}' does not exist"
    if not lacking:
        return reasons[0] if reasons else text
    text += " in " + ", ".join(lacking)
    close = _did_you_mean(name, [c.name for t in lacking.values() for c in t.columns])
    owners = [t.name for t in schema.tables if t.column(wanted) is not None]
    if close or not owners:
        return text + close
    return text + f" ({name} is a column of {', '.join(owners[:3])})"


def _why_unreadable(scope: Scope, column: exp.Column, tables: dict[str, Table], schema: Schema,
                    spelled: Mapping[str, str]) -> str | None:
    """Why a query cannot read a column that some table has, as a finding that names the fix: it names a table its
    FROM lacks (`tokens.total_supply` beside `FROM contracts`) or reads under an alias, two of its tables have it
    (`block_timestamp` in a join), or the CTE or subquery it reads does not pass it on; None for none of these. Names
    are given as `spelled` in the query as written (lower case: its spelling)."""
    def as_written(text: str) -> str:
        return spelled.get(text.lower(), text)

    name, owner = as_written(column.name), as_written(column.table)
    sources = {alias.lower(): source for alias, source in scope.sources.items()}
    if column.table and column.table.lower() not in sources:
        aliases = [as_written(alias) for alias, source in sources.items()
                   if isinstance(source, exp.Table) and source.name.lower() == column.table.lower()]
        table = schema.table(column.table)
        if aliases:
            return f"Column '{owner}.{name}' cannot be read: that query reads {owner} as {aliases[0]}; write " \
                   f"{aliases[0]}.{name}"
        return (f"Column '{owner}.{name}' cannot be read: {owner} is not in the FROM of that query; JOIN {owner} to "
                "read it" if table is not None and table.column(name) is not None else
                f"Column '{owner}.{name}' cannot be read: that query has no table or alias named {owner}")
    having = [as_written(alias) for alias, table in tables.items() if table.column(name) is not None]
    if not column.table and len(having) > 1:
        return (f"Column '{name}' is ambiguous: {' and '.join(having)} both have it; qualify it ({having[0]}.{name} "
                f"or {having[1]}.{name})")
    read = {column.table.lower(): sources[column.table.lower()]} if column.table else {} if having else sources
    derived = [(alias, source.expression) for alias, source in read.items() if isinstance(source, Scope)
               and isinstance(source.expression, exp.Select)
               and name.lower() not in {n.lower() for n in source.expression.named_selects}
               and any(t.column(name) is not None for t in _scope_tables(source, schema).values())]
    if not derived:
        return None
    alias, select = derived[0]
    where = as_written(alias) if alias.lower() in spelled else "the subquery in FROM"  # `_0`: sqlglot's name for it
    computed = next((p for p in select.expressions if isinstance(p, exp.Alias)
                     and {c.name.lower() for c in p.this.find_all(exp.Column)} == {name.lower()}
                     and not p.this.find(exp.AggFunc, exp.Window)), None)  # DATE(block_timestamp) AS day, not COUNT
    if computed is not None:
        shown = computed.this.copy()
        for identifier in shown.find_all(exp.Identifier):
            identifier.set("this", as_written(identifier.name))
        return (f"Column '{name}' cannot be read: {where} selects it only as "
                f"{_unqualified_sql(shown, schema.dialect)} AS {as_written(computed.alias)}; read "
                f"{as_written(computed.alias)}")
    grouped = " (and GROUP BY)" if select.args.get("group") else ""
    return f"Column '{name}' cannot be read: {where} does not select it; add it to the SELECT{grouped} of {where}"


def _scope_tables(scope, schema: Schema) -> dict:
    """The schema tables a query scope reads, by lower-cased alias (tables the schema lacks are left out), and the
    records of a struct array it UNNESTs (`FROM blocks, UNNEST(withdrawals) AS w`: `w` reads a table
    "blocks.withdrawals" of the struct's fields), so `w.amount` is a schema column like any other. The array may be
    an enclosing query's (`(SELECT SUM(...) FROM UNNEST(b.withdrawals) AS w)`); the records go by the alias as written
    (`w`) and by sqlglot's name for the UNNEST once qualified (`_0`, read as `_0.w.amount`)."""
    tables = _lowered(source_tables(scope, schema))
    for alias, source in scope.sources.items():
        unnest = source.expression if isinstance(source, Scope) else None
        if isinstance(unnest, exp.Unnest) and len(unnest.expressions) == 1:
            records = next(filter(None, (_struct_records(unnest.expressions[0], _lowered(source_tables(outer, schema)),
                                                         schema.dialect) for outer in enclosing_scopes(scope))), None)
            if records is not None:
                tables.update({name.lower(): records for name in (alias, *unnest.alias_column_names)})
    return tables


def source_tables(scope: Scope, schema: Schema) -> dict[str, Table]:
    """The scope's sources that are schema tables, by the name the query refers to them with (as written)."""
    tables = {alias: schema.table(".".join(p.name for p in source.parts))
              for alias, source in scope.sources.items() if isinstance(source, exp.Table)}
    return {alias: table for alias, table in tables.items() if table is not None}


def _lowered(tables: dict[str, Table]) -> dict[str, Table]:
    """Tables by lower-cased alias: how validation looks up a column's qualifier."""
    return {alias.lower(): table for alias, table in tables.items()}


def enclosing_scopes(scope: Scope) -> Iterator[Scope]:
    """The scope and those enclosing it, whose sources a correlated column may name."""
    while scope is not None:
        yield scope
        scope = scope.parent


def _tables_only(tables: dict[str, Table]) -> dict[str, Table]:
    """The tables of `_scope_tables` without UNNESTed records: what a finding may tell a reviser to qualify by."""
    return {alias: table for alias, table in tables.items() if not isinstance(table, Records)}


@dataclass
class Records(Table):
    """The records of a struct array read through UNNEST: a table of the struct's fields, named "table.array"."""

    of: Table | None = None

    def lacks(self, alias: str, name: str) -> str:
        """The finding for a field these records lack, naming the fields and the array's table's column of that name."""
        fields = ", ".join(c.name for c in self.columns)
        owner = f"; {name} is a column of {self.of.name}" if self.of and self.of.column(name) is not None else ""
        return (f"Column '{alias}.{name}' cannot be read: {alias} is one of {self.name}, whose fields are "
                f"{fields}{owner}")


def _check_record_fields(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """A field the records of an UNNESTed struct array lack (`w.timestamp` for `UNNEST(withdrawals) AS w`: the
    block's time is blocks.timestamp): qualification leaves struct fields unchecked, and the database's error names
    no field the records have."""
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for dot in _own_nodes(scope, exp.Dot):
            records = _records_read(dot, tables)
            if isinstance(records, Records) and records.column(dot.name) is None:
                findings.errors.append(records.lacks(dot.this.name, dot.name))
                return


def _records_read(dot: exp.Dot, tables: dict[str, Table]) -> Table | None:
    """The table a field access reads from (`_0.w.amount` once qualified: the records named `_0`), None when the
    access is on no column."""
    return tables.get((dot.this.table or dot.this.name).lower()) if isinstance(dot.this, exp.Column) else None


def _struct_records(array: exp.Expression, tables: dict[str, Table], dialect: str) -> Records | None:
    """The table of records an array-of-structs column holds (one column per field), None for any other array."""
    found = _schema_column(array, tables)
    if found is None:
        return None
    try:
        kind = exp.DataType.build(found[1].type, dialect=dialect)
    except (SqlglotError, ValueError):
        return None
    element = kind.expressions[0] if kind.is_type(exp.DataType.Type.ARRAY) and kind.expressions else None
    if element is None or not element.is_type(exp.DataType.Type.STRUCT):
        return None
    fields = [Column(field.name, field.args["kind"].sql(dialect=dialect)) for field in element.expressions
              if isinstance(field, exp.ColumnDef) and field.args.get("kind") is not None]
    return Records(f"{found[0].name}.{found[1].name}", fields, of=found[0]) if fields else None


def _did_you_mean(name: str, choices: list[str]) -> str:
    """Close spellings, and names contained in each other (`timestamp` for `block_timestamp`)."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    close += [c for c in lowered if len(c) > 2 and (c in name.lower() or name.lower() in c) and c not in close]
    return f"; did you mean {', '.join(lowered[c] for c in close[:3])}?" if close else ""


def _check_aggregates(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """An aggregate beside a plain column in a SELECT without GROUP BY. Only the SELECT's own aggregates and columns
    count: those of a scalar subquery (`(SELECT SUM(x) FROM t WHERE t.a = r.a)`) or a window belong elsewhere."""
    for select in tree.find_all(exp.Select):
        if select.args.get("group"):
            continue
        projections = select.expressions
        has_agg = any(_owned_by(select, p, exp.AggFunc) for p in projections)
        plain = [p for p in projections if not _owned_by(select, p, exp.AggFunc) and _owned_by(select, p, exp.Column)]
        if has_agg and plain:
            message = f"aggregate beside non-aggregated {plain[0].sql(dialect=dialect)} without GROUP BY"
            (findings.errors if dialect in STRICT_GROUP_BY else findings.warnings).append(message)


def _check_limits_on_one_row(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """A LIMIT on a SELECT of aggregates only, without GROUP BY (`SELECT SUM(eth_balance) FROM balances ORDER BY
    eth_balance DESC LIMIT 100`): aggregation comes first and leaves one row, so the query sums every row where the top
    100 were meant. The rows to aggregate are taken in a subquery. LIMIT 1 keeps the one row: harmless bare, or on
    a MIN or MAX (`MAX(x) ... ORDER BY x DESC LIMIT 1` is still the largest)."""
    for select in tree.find_all(exp.Select):
        limit = select.args.get("limit")
        if select.args.get("group") or not isinstance(limit, exp.Limit) or not limit.expression.is_int \
                or not all(_owned_by(select, p, exp.AggFunc) for p in select.expressions):
            continue
        extremes = all(isinstance(agg, (exp.Min, exp.Max))
                       for p in select.expressions for agg in _owned_nodes(select, p, exp.AggFunc))
        if limit.expression.to_py() == 1 and (extremes or not select.args.get("order")):
            continue
        findings.errors.append(
            f"{select.expressions[0].sql(dialect=dialect)} is aggregated over all rows into one row before "
            f"{limit.sql(dialect=dialect)} applies: to aggregate only those rows, take them in a subquery first, "
            f"SELECT SUM(x) FROM (SELECT x FROM t ORDER BY x DESC {limit.sql(dialect=dialect)})")
        return


def _owned_nodes(select: exp.Select, projection: exp.Expression, kind: type[exp.Expression]):
    """The projection's `kind` nodes of this SELECT itself, not of a subquery or inside a window."""
    return (node for node in projection.find_all(kind) if node.find_ancestor(exp.Select, exp.Window) is select)


def _owned_by(select: exp.Select, projection: exp.Expression, kind: type[exp.Expression]) -> bool:
    """Whether the projection holds a `kind` node of this SELECT itself, not of a subquery or inside a window."""
    return next(_owned_nodes(select, projection, kind), None) is not None


def _check_repeated_expressions(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """Two output columns named differently but computing the same thing (`COUNT(*) AS above, COUNT(*) AS below`):
    the query meant two quantities and computes one twice, so its rows look plausible and can still win a vote."""
    for select in tree.find_all(exp.Select):
        named: dict[str, str] = {}
        for projection in select.expressions:
            if not isinstance(projection, exp.Alias):
                continue
            expression = projection.this.sql(dialect=dialect)
            first = named.setdefault(expression, projection.alias)
            if first.lower() != projection.alias.lower():
                findings.errors.append(f"columns {first} and {projection.alias} both compute {expression}: "
                                       "make each compute what its name says")
                break


class FilteredShare(NamedTuple):
    """A share taken among rows that all meet the condition it counts by: always 1 (or 100 as a percentage)."""
    select: exp.Select
    share: exp.Expression
    #: The kept conditions the share's condition restates, each with the WHERE it comes from ("WHERE": the select's
    #: own).
    restated: list[tuple[exp.Expression, str]]


def shares_of_the_filter(tree: exp.Expression, dialect: str) -> Iterator[FilteredShare]:
    """Each share whose condition every row it reads already meets (`COUNTIF(c) / COUNT(*) ... WHERE c`, `AVG(IF(c,
    1, 0))`, or WHERE c in the CTE it reads). A condition of several ANDed parts is met when WHERE keeps each of them,
    a test that a column is not NULL aside where the rows cannot hold NULL there (an inner join's key, a column
    compared elsewhere); `x = TRUE` is `x`."""
    for select, conditions in _selects_with_kept_conditions(tree):
        kept = {condition_key(c, dialect): (c, where) for c, where in conditions}
        if not kept:
            continue
        for share in select.find_all(exp.Div, exp.SafeDivide, exp.Anonymous, exp.Avg):
            if share.find_ancestor(exp.Select) is not select:
                continue
            part, whole = (share.this, None) if isinstance(share, exp.Avg) else _quotient(share) or (None, None)
            if part is None:
                continue
            counted, restated = _of_all_rows(part, kept, _never_null(select, conditions), dialect)
            constant = isinstance(counted, exp.Literal) if whole is None else (
                counted is not None and _bare_sql(counted, dialect) == _bare_sql(_as_count(whole), dialect))
            if constant:
                yield FilteredShare(select, share, [kept[key] for key in restated])


def _check_shares_of_the_filter(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """A share of the rows the filter keeps (see `shares_of_the_filter`): it runs and looks like an answer, and can
    win a vote."""
    for found in shares_of_the_filter(tree, dialect):
        written = " and ".join(condition.sql(dialect=dialect) for condition, _ in found.restated)
        where = found.restated[0][1]
        findings.errors.append(f"{found.share.sql(dialect=dialect)} is always 100 % of the rows: {where} keeps only "
                               f"rows with {written}; take {written} out of {where} so the share is of all rows")
        return


def _restated(condition: exp.Expression, kept: Mapping[str, tuple[exp.Expression, str]], never_null: set[str],
              dialect: str) -> list[str]:
    """The keys of the kept conditions `condition` restates: all of its ANDed parts (tests of NOT NULL on a column
    the rows never hold NULL in aside), or none when WHERE does not keep one of them. A part restates a condition
    of the select's own WHERE only on the same tables, where both name theirs (`a.status = 1` is not `b.status = 1`)."""
    parts = conjuncts(condition)
    keys = []
    for part in parts:
        tested = _tested_not_null(part)
        if tested is not None and tested.name.lower() in never_null | _compared_columns(parts):
            continue
        key = condition_key(part, dialect)
        tables = (_tables_named(part), _tables_named(kept[key][0])) if key in kept else ()
        if key not in kept or kept[key][1] == "WHERE" and all(tables) and tables[0] != tables[1]:
            return []
        keys.append(key)
    return keys


def _tested_not_null(condition: exp.Expression) -> exp.Column | None:
    """The column `condition` only tests to be not NULL (`x IS NOT NULL`); None for any other condition."""
    test = condition.this.unnest() if isinstance(condition, exp.Not) else None
    column = test.this if isinstance(test, exp.Is) and isinstance(test.expression, exp.Null) else None
    return column if isinstance(column, exp.Column) else None


def _never_null(select: exp.Select, kept: list[tuple[exp.Expression, str]]) -> set[str]:
    """The columns (lower-cased names) every row a select reads holds a value in: the keys of its inner joins and the
    columns its kept conditions compare."""
    return {name for _, name in _inner_join_keys(select)} | _compared_columns([condition for condition, _ in kept])


def _compared_columns(conditions: list[exp.Expression]) -> set[str]:
    """The columns (lower-cased names) these conditions compare as they stand: a row they keep has a value there."""
    return {side.name.lower() for condition in conditions if isinstance(condition, COMPARISONS)
            for side in (condition.this, condition.args.get("expression")) if isinstance(side, exp.Column)}


def _tables_named(condition: exp.Expression) -> set[str]:
    """The tables (or aliases) a condition's columns name, lower case; empty when it names none."""
    return {column.table.lower() for column in condition.find_all(exp.Column) if column.table}


def condition_key(condition: exp.Expression, dialect: str) -> str:
    """A condition however written: `x = TRUE` and `x IS TRUE` are `x`; columns without their tables."""
    condition = condition.unnest()
    if isinstance(condition, (exp.EQ, exp.Is)):
        sides = [condition.this, condition.expression]
        others = [side for side in sides if not (isinstance(side, exp.Boolean) and side.this is True)]
        if len(others) == 1:
            condition = others[0]
    return _bare_sql(condition, dialect)


def _selects_with_kept_conditions(tree: exp.Expression) -> list[tuple[exp.Select, list[tuple[exp.Expression, str]]]]:
    """Each SELECT with the conditions every row it reads meets, each with the WHERE it comes from; its own WHERE's
    alone where sqlglot cannot scope the query."""
    try:
        return [(scope.expression, _kept_conditions(scope)) for scope in traverse_scope(tree)
                if isinstance(scope.expression, exp.Select)]
    except OptimizeError:
        return [(select, _own_conditions(select)) for select in tree.find_all(exp.Select)]


def _own_conditions(select: exp.Select) -> list[tuple[exp.Expression, str]]:
    """The conditions a SELECT's own WHERE keeps, each with that origin."""
    where = select.args.get("where")
    return [(c, "WHERE") for c in conjuncts(where.this)] if where else []


def _kept_conditions(scope: Scope) -> list[tuple[exp.Expression, str]]:
    """The conditions every row a SELECT reads meets, each with the WHERE it comes from: its own, and those of the
    one CTE or subquery it reads alone (no join) on columns that source passes on under their own names (all of
    them with `*`, when that source joins nothing)."""
    select = scope.expression
    kept = _own_conditions(select)
    sources = [source for _, source in scope.selected_sources.values()]
    if select.args.get("joins") or len(sources) != 1 or not isinstance(sources[0], Scope) or \
            not isinstance(sources[0].expression, exp.Select):
        return kept
    inner = sources[0].expression
    every = not inner.args.get("joins") and any(isinstance(p, exp.Star) for p in inner.expressions)
    passed = {p.alias_or_name.lower() for p in inner.expressions
              if isinstance(p.unalias(), exp.Column) and p.unalias().name.lower() == p.alias_or_name.lower()}
    cte = inner.find_ancestor(exp.CTE)
    source = f"the WHERE of {cte.alias if cte else 'the subquery'}"
    return kept + [(condition, source) for condition, _ in _kept_conditions(sources[0])
                   if every or all(column.name.lower() in passed for column in condition.find_all(exp.Column))]


def _quotient(node: exp.Expression) -> tuple[exp.Expression, exp.Expression] | None:
    """A division's part and whole (`a / b`, `SAFE_DIVIDE(a, b)`, `IEEE_DIVIDE(a, b)`); None for anything else."""
    if isinstance(node, (exp.Div, exp.SafeDivide)):
        return node.this, node.expression
    if isinstance(node, exp.Anonymous) and node.name.upper() == "IEEE_DIVIDE" and len(node.expressions) == 2:
        return node.expressions[0], node.expressions[1]
    return None


def _check_divisions_by_one(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """`x / 1` is x: a share or ratio written without its whole (`SAFE_DIVIDE(COUNTIF(c), 1)`) runs and shows a
    count where a fraction was asked. `x / 1.0` is left alone (it makes an integer a real in SQLite and Postgres),
    as is a quotient divided again (`SUM(x) / 1 / COUNT(*)`)."""
    for node in tree.find_all(exp.Div, exp.SafeDivide, exp.Anonymous):
        quotient = _quotient(node)
        whole = quotient[1].unnest() if quotient else None
        divided_again = isinstance(node.parent, (exp.Div, exp.SafeDivide)) and node.parent.this is node
        if isinstance(whole, exp.Literal) and whole.is_int and whole.this == "1" and not divided_again:
            findings.errors.append(f"{node.sql(dialect=dialect)} divides by 1, which changes nothing: divide by the "
                                   "whole the part is taken of (for a share of rows, COUNT(*))")
            return


def _check_and_or_precedence(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """`x OR y AND z` is `x OR (y AND z)`: AND binds first, so a filter meant for both (a time window after an OR of
    two kinds) holds for one side only, and the query counts the other side over the whole table. Two alternatives
    that are each an AND (`a AND b OR c AND d`) are the idiom, and left alone."""
    for node in tree.find_all(exp.Or):
        sides = (node.this, node.expression)
        if sum(isinstance(side, exp.And) for side in sides) == 1:
            read = exp.or_(*(exp.paren(side, copy=True) if isinstance(side, exp.And) else side for side in sides))
            findings.errors.append(f"{node.sql(dialect=dialect)} reads as {read.sql(dialect=dialect)} (AND binds "
                                   "before OR): put the alternatives in parentheses, (x OR y) AND z, so the other "
                                   "conditions hold for every alternative")
            return


#: Aggregates that, taken of a grouped expression, are that expression: each says which group its row is.
SAME_WITHIN_A_GROUP = (exp.Min, exp.Max, exp.Avg, exp.AnyValue)


def _check_groups_shown(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """A grouped result of aggregates alone (`SELECT COUNT(*) ... GROUP BY bucket`): one row per group, none saying
    which, so a breakdown cannot be read, and a question asking one figure over the groups gets many rows. Only the
    result's SELECTs count: a subquery may group rows only to aggregate them again."""
    root = build_scope(tree)
    if root is None:
        return
    for select in (scope.expression for scope in _result_scopes(root)):
        group = select.args.get("group")
        keys = [key for key in (group.expressions if group else []) if not isinstance(key, exp.Literal)]
        if not keys or len(keys) < len(group.expressions):
            continue  # no grouping, or by position: that projection is the group
        grouped = {_bare_sql(key, dialect) for key in keys}

        def shows_group(projection: exp.Expression) -> bool:
            value = projection.unalias()
            return not _owned_by(select, projection, exp.AggFunc) or (
                isinstance(value, SAME_WITHIN_A_GROUP) and _bare_sql(value.this, dialect) in grouped)

        if not any(shows_group(p) for p in select.expressions):
            key = keys[0].sql(dialect=dialect)
            findings.errors.append(
                f"GROUP BY {', '.join(k.sql(dialect=dialect) for k in keys)} gives one row per group, but the result "
                f"shows only aggregates, so no row says which group it is: select {key} beside them, or, for one "
                "figure over all the groups, aggregate the grouped rows in an outer query")


def _of_all_rows(part: exp.Expression, kept: Mapping[str, tuple[exp.Expression, str]], never_null: set[str],
                 dialect: str) -> tuple[exp.Expression | None, list[str]]:
    """`part` (a share's numerator, or what AVG takes) counted over all rows where it counts by a condition WHERE
    keeps (`COUNTIF(c)` -> `COUNT(*)`, `IF(c, x, 0)` -> `x`), as `_as_count` reads it, and the keys of the kept
    conditions the first such condition restates; (None, []) when it counts by no kept condition."""
    restated: list[list[str]] = []

    def drop(node: exp.Expression) -> exp.Expression:
        condition, kept_value = None, None
        if isinstance(node, exp.CountIf):
            condition, kept_value = node.this, exp.Count(this=exp.Star())
        elif isinstance(node, exp.If) and _is_zero(node.args.get("false")):
            condition, kept_value = node.this, node.args.get("true")
        elif isinstance(node, exp.Case) and len(node.args.get("ifs") or []) == 1 and _is_zero(node.args.get("default")):
            condition, kept_value = node.args["ifs"][0].this, node.args["ifs"][0].args.get("true")
        keys = _restated(condition, kept, never_null, dialect) if condition is not None else []
        if keys and kept_value is not None:
            restated.append(keys)
            return kept_value.copy()
        return node

    counted = _as_count(part.copy().transform(drop))
    return (counted, restated[0]) if restated else (None, [])


def _as_count(expression: exp.Expression) -> exp.Expression:
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


def _is_zero(expression: exp.Expression | None) -> bool:
    return expression is None or isinstance(expression, exp.Null) or \
        isinstance(expression, exp.Literal) and expression.name in {"0", "0.0"}


def conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    """The conditions ANDed at the top of `condition`, parentheses around each taken off."""
    condition = condition.unnest()
    return [c.unnest() for c in condition.flatten()] if isinstance(condition, exp.And) else [condition]


def _bare_sql(expression: exp.Expression, dialect: str) -> str:
    """An expression's SQL with its columns named without their tables, so `l.topics` and `topics` compare equal."""
    return _unqualified_sql(expression, dialect).lower()


def _unqualified_sql(expression: exp.Expression, dialect: str) -> str:
    """An expression's SQL with its columns named without their tables, as a finding quotes it to the reviser."""
    bare = expression.copy().transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
    return bare.unnest().sql(dialect=dialect)


COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In)


def _check_text_against_numbers(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """A number column compared with a word (`flights.Airline = 'United Airlines'`, where Airline is the airline's
    id): the query runs and finds nothing, or everything, so it is sent back with the text columns of that name."""
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for comparison in _own_nodes(scope, *COMPARISONS):
            for column, word in _columns_against_words(comparison):
                found = _schema_column(column, tables)
                if found is None or not is_numeric(found[1].type, schema.dialect):
                    continue
                table, col = found
                text_columns = [(t, c) for t in schema.tables for c in t.columns
                                if c.name.lower() == col.name.lower() and not is_numeric(c.type, schema.dialect)]
                hint = ""
                if text_columns:
                    other, text_column = text_columns[0]
                    joined = {t.name.lower() for t in tables.values()}
                    hint = (f"; filter on {other.name}.{text_column.name} instead"
                            + ("" if other.name.lower() in joined else f" (join {other.name})"))
                findings.errors.append(
                    f"{table.name}.{col.name} holds numbers ({col.type}), not text like '{word}'{hint}")
                return  # one such finding is enough to send the query back


#: How each dialect tests an array for an element and counts its elements, for the finding's fix.
ARRAY_IDIOMS = {
    "bigquery": ("'x' IN UNNEST({col})", "ARRAY_LENGTH({col})"),
    "duckdb": ("list_contains({col}, 'x')", "len({col})"),
    "postgres": ("'x' = ANY({col})", "cardinality({col})"),
}
#: Uses of an array column as if it were one value: compared, matched, or aggregated (counts rows, not elements).
ARRAY_MISUSES = (*COMPARISONS, exp.Like, exp.ILike, exp.Count, exp.Min, exp.Max, exp.Sum, exp.Avg, exp.Distinct,
                 exp.Substring, exp.Lower, exp.Upper, exp.Left, exp.Right)


def _check_arrays_as_values(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """An array column compared, aggregated or read as text as one value (`function_sighashes = '0xa9059cbb'`,
    `COUNT(DISTINCT function_sighashes)`, `SUBSTRING(topics, 1, 1)`): the query fails, or counts rows where elements
    were meant. The finding
    names the dialect's membership test and element count. Elements reached through UNNEST or an offset are values."""
    if schema.dialect not in ARRAY_IDIOMS:
        return
    member, length = ARRAY_IDIOMS[schema.dialect]
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for column in scope.columns:
            if not isinstance(column.parent, ARRAY_MISUSES) or isinstance(column.parent, exp.In) and column is not column.parent.this:
                continue
            found = _schema_column(column, tables)
            if found is None or not column_type(found[1].type, schema.dialect).is_type(exp.DataType.Type.ARRAY):
                continue
            table, col = found
            findings.errors.append(
                f"{table.name}.{col.name} is an array ({col.type}), not one value: test an element with "
                f"{member.format(col=col.name)}, count its elements with {length.format(col=col.name)}, or UNNEST it")
            return  # one such finding is enough to send the query back


#: Literal shapes a column's example values tell apart: a column none of whose examples has the shape never equals a
#: literal that has it (`trace_address = '0x0000a26b…'`: a call's position '1,0' compared with an address).
LITERAL_SHAPES = {"a hex string": re.compile(r"0x[0-9a-f]*", re.IGNORECASE)}
#: Comparisons whose literal a column's value must have the shape of (LIKE's wildcards aside).
SHAPED_COMPARISONS = (exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike)


def _check_literal_shapes(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """A text column compared with a literal of a shape none of its example values has: the filter finds nothing (or,
    negated, keeps everything), so the query is sent back with the columns of the same table whose values have that
    shape."""
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for comparison in _own_nodes(scope, *SHAPED_COMPARISONS):
            for column, literal in _columns_against_literals(comparison):
                found = _schema_column(column, tables)
                shape, pattern = next(((name, pattern) for name, pattern in LITERAL_SHAPES.items()
                                       if pattern.fullmatch(literal.strip("%"))), (None, None))
                if found is None or shape is None or is_numeric(found[1].type, schema.dialect):
                    continue  # a number column compared with text is _check_text_against_numbers' finding
                table, col = found
                examples = [str(value) for value in col.examples if value is not None]
                if not examples or any(pattern.fullmatch(value) for value in examples):
                    continue
                shaped = [c.name for c in table.columns
                          if any(pattern.fullmatch(str(v)) for v in c.examples if v is not None)]
                hint = f": compare {shape} with {', '.join(shaped[:4])}" if shaped else ""
                shown = ", ".join(f"'{value}'" for value in examples[:3])
                findings.errors.append(f"{table.name}.{col.name} holds values like {shown}, never {shape}{hint}")
                return  # one such finding is enough to send the query back


def _inner_join_keys(select: exp.Expression) -> set[tuple[str, str]]:
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


def _check_nulls_an_inner_join_drops(tree: exp.Expression, findings: Findings) -> None:
    """`x IS NULL` on a column an inner join matches on is never true: the join keeps only the rows where x found a
    match (`COUNTIF(tx.to_address IS NULL)` after `JOIN contracts c ON c.address = tx.to_address` counts nothing).
    The rows without a match are kept by a LEFT JOIN."""
    for scope in traverse_scope(tree):
        keys = _inner_join_keys(scope.expression)
        if not keys:
            continue
        for test in _own_nodes(scope, exp.Is):
            column, outer = test.this, test.parent
            while isinstance(outer, exp.Paren):
                outer = outer.parent
            # IS NOT NULL: NOT around it, or (Postgres) the test's own negation
            if isinstance(outer, exp.Not) or test.args.get("negate") or not isinstance(test.expression, exp.Null) \
                    or not isinstance(column, exp.Column):
                continue
            name = column.sql()
            if (column.table.lower(), column.name.lower()) in keys:
                findings.errors.append(f"{name} IS NULL is never true: the inner join on {name} keeps only the rows "
                                       f"where it has a match; keep the rows without one with a LEFT JOIN")
                return  # one such finding is enough to send the query back


#: What a result column may do to an amount and still show it in the amount's unit: rename, cast, round, aggregate
#: (a sum of wei is wei), multiply by another column (gas used times a price per gas is a fee in wei), add or
#: subtract amounts. A product with a number (`value * 1e-18`) may be a conversion, so it is not judged.
KEEPS_UNIT = (exp.Alias, exp.Paren, exp.Cast, exp.TryCast, exp.Round, exp.Sum, exp.Avg, exp.Min, exp.Max,
              exp.AnyValue, exp.Mul, exp.Add, exp.Sub)


def _check_raw_amounts(tree: exp.Expression, schema: Schema, shown_units: Mapping[str, Unit],
                       findings: Findings) -> None:
    """A result column showing an amount in its base unit (`SELECT eth_balance`, `SUM(value)`): the user reads 4.2e21
    where 4,200 ETH was meant, and the answer compares badly with any figure in ETH. The finding names the conversion.
    Only the outer query's columns are judged; a division or any other function takes the amount out of its unit."""
    root = build_scope(tree)
    if root is None:
        return
    for scope in _result_scopes(root):
        tables = _scope_tables(scope, schema)
        for projection in scope.expression.selects:
            for name, column, unit in _amounts_in_base_units(projection, tables, shown_units):
                findings.errors.append(f"{name} is in {unit.how_shown(column.name)}")
                return  # one such finding is enough to send the query back


#: Comparisons that weigh an amount against a figure (an equality with a non-zero figure of wei is as unlikely).
WEIGHINGS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.Between)


def _check_amounts_against_tiny_figures(tree: exp.Expression, schema: Schema, shown_units: Mapping[str, Unit],
                                        findings: Findings) -> None:
    """An amount in its base unit compared with a figure meant in a larger one (`eth_balance > 1000` for "more than
    1,000 ETH", `gas_price > 50` for 50 gwei): the filter keeps almost every row, and the answer looks plausible. A
    positive figure below the unit's least meant amount is such a figure; zero or less is a real bound (`value > 0`)."""
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for comparison in _own_nodes(scope, *WEIGHINGS):
            for amount, figure in _weighed(comparison):
                number = _figure(figure)
                if number is None or number <= 0:
                    continue
                for name, column, unit in _amounts_in_base_units(amount, tables, shown_units):
                    if unit.least_meant is not None and number < unit.least_meant:
                        findings.errors.append(
                            f"{_unqualified_sql(comparison, schema.dialect)} compares {name}, an amount in {unit.name}, "
                            f"with {figure.sql(dialect=schema.dialect)} {unit.name}, almost nothing: convert the column "
                            f"to the figure's unit ({unit.conversion(column.name)})")
                        return  # one such finding is enough to send the query back


def _check_figures_the_question_gives(tree: exp.Expression, schema: Schema, units: Mapping[str, Unit],
                                      question: str, findings: Findings) -> None:
    """An amount compared with a figure that is none of the question's amounts in the scales it writes amounts in,
    when it writes one (`value > 1000000000000000` for "more than 10 ETH", a power of ten off; `value / 1e9 > 10`,
    gwei for ETH): the filter keeps other rows, and nothing else looks wrong. A figure of almost nothing is left to
    the check that names that."""
    for found in figures_not_given(tree, schema, units, question):
        unit = found.unit
        if unit.least_meant is not None and abs(found.meant) < unit.least_meant and not unit.asked_in(question):
            continue  # almost nothing: the check of tiny figures names it
        number, word = found.closest
        findings.errors.append(
            f"{_unqualified_sql(found.comparison, schema.dialect)} compares {found.column} ({unit.name}) with "
            f"{found.meant / unit.scales[word]:g} {word}, none of the amounts the question gives "
            f"({', '.join(f'{n} {w}' for n, w in found.given)}); {number} {word} is "
            f"{_unqualified_sql(found.as_given(), schema.dialect)}")
        return  # one such finding is enough to send the query back


class FigureNotGiven(NamedTuple):
    """An amount compared with a figure that is none of the question's amounts."""

    comparison: exp.Expression
    figure: exp.Expression
    #: "table.column" of the amount, its unit, and the factor the comparison's side multiplies it by
    #: (`value / 1e18`: 1e-18).
    column: str
    unit: Unit
    factor: float
    #: The figure read in the column's unit.
    meant: float
    #: The question's amounts in the unit's scales (number as written, scale word), and the one the figure was
    #: meant as: the one whose number the figure writes (also a number the question writes without a scale word, as
    #: "1" in "between 1 and 10 ETH"), else the closest to it in powers of ten (not a bare number: "the last 7 days").
    given: list[tuple[str, str]]
    closest: tuple[str, str]

    @property
    def figure_as_given(self) -> str:
        """The figure the comparison's side needs for the amount meant: one of the question's numbers where one is
        it (`value / 1e18 > 10`), else the number times its scale (`value > 10 * 1e18`)."""
        number, word = self.closest
        ratio = self.unit.scales[word] * self.factor
        target = value_of(number) * ratio
        same = next((n for n, _ in self.given if math.isclose(value_of(n), target, rel_tol=1e-9)), None)
        if same is not None:
            return same.replace(",", "")
        return f"{number.replace(',', '')} * {_written_scale(ratio)}"

    def as_given(self) -> exp.Expression:
        """The comparison with the figure meant."""
        rewritten = self.comparison.copy()
        key = next(k for k, v in self.comparison.args.items() if v is self.figure)
        rewritten.set(key, parse_one(self.figure_as_given))
        return rewritten


def figures_not_given(tree: exp.Expression, schema: Schema, units: Mapping[str, Unit],
                      question: str) -> Iterator[FigureNotGiven]:
    """Each comparison of an amount with a figure that is none of the question's amounts in the scales it writes
    (when it writes one). The figure is read in the column's unit through the conversion written on either side
    (`value / 1e18 > 10` is `value > 10 * 1e18`); zero (or less) is a bound in any unit, the question's other numbers
    count too ("0.1 to 1 ETH"), and a range's bound in a histogram may stand for none (`x < 1e30` for "or more")."""
    numbers = NUMBER.findall(question)
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for comparison in _own_nodes(scope, *WEIGHINGS):
            if comparison.find_ancestor(exp.Case, exp.If, exp.CountIf):
                continue
            for amount, figure in _weighed(comparison):
                bound, scaled = _constant(figure), _scaled_column(amount)
                found = _schema_column(scaled[0], tables) if scaled and bound and bound > 0 else None
                unit = units.get(f"{found[0].name}.{found[1].name}".lower()) if found else None
                given = _amounts_given(question, unit) if unit else []
                if not given:
                    continue
                meant, amounts = bound / scaled[1], _amounts_meant(given, numbers)
                in_unit = {amount: value_of(amount[0]) * unit.scales[amount[1]] for amount in amounts}
                if any(math.isclose(meant, value, rel_tol=1e-9) for value in in_unit.values()):
                    continue
                closest = next((a for a in amounts if math.isclose(bound, value_of(a[0]), rel_tol=1e-9)), None) or \
                    min(given, key=lambda a: _orders_apart(meant, in_unit[a]))
                yield FigureNotGiven(comparison, figure, f"{found[0].name}.{found[1].name}", unit, scaled[1], meant,
                                     given, closest)


def _amounts_given(question: str, unit: Unit) -> list[tuple[str, str]]:
    """The amounts `question` writes in one of the unit's scales ("10 ETH", "1,000 ether"): number and scale word as
    the unit spells it; none for a unit without scales."""
    if not unit.scales:
        return []
    words = {word.lower(): word for word in unit.scales}
    pattern = rf"(?P<number>{NUMBER.pattern})\s*(?P<word>{'|'.join(map(re.escape, words))})\b"
    return [(match["number"], words[match["word"].lower()])
            for match in re.finditer(pattern, question, re.IGNORECASE)]


def _amounts_meant(given: list[tuple[str, str]], numbers: list[str]) -> list[tuple[str, str]]:
    """The question's amounts as (number, scale word): each written with a scale word in that scale, each other number
    in any scale the question writes ("0.1 to 1 ETH": 0.1 ETH too; in "32 ETH, i.e. 32,000,000,000 gwei" the second
    is no amount of ETH)."""
    written = {value_of(number) for number, _ in given}
    words = list(dict.fromkeys(word for _, word in given))
    return given + [(number, word) for number in numbers if value_of(number) not in written for word in words]


def _orders_apart(one: float, other: float) -> float:
    """How many powers of ten apart two figures are (the finding names the amount the figure is closest to)."""
    return abs(math.log10(abs(one) / abs(other))) if one and other else math.inf


def _written_scale(scale: float) -> str:
    """A scale as a query writes it: a power of ten as `1e18`, any other number as itself."""
    power = math.log10(scale) if scale > 0 else 0.5
    return f"1e{round(power)}" if power.is_integer() and power >= 3 else f"{scale:g}"


#: What a comparison may do to an amount and still weigh that amount: casts, aggregates, parentheses.
WEIGHS_AN_AMOUNT = (exp.Paren, exp.Cast, exp.TryCast, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.AnyValue, exp.Round)


def _scaled_column(node: exp.Expression) -> tuple[exp.Column | exp.Dot, float] | None:
    """The column (or record field) `node` weighs and the (non-zero) number it is multiplied by on the way (`value /
    1e18`: 1e-18); None for anything but a column, cast, aggregated, multiplied or divided by constants."""
    if isinstance(node, (exp.Column, exp.Dot)):
        return node, 1.0
    if isinstance(node, WEIGHS_AN_AMOUNT):
        return _scaled_column(node.this)
    if isinstance(node, (exp.Mul, exp.Div)):
        sides = [(node.this, node.expression)] + ([(node.expression, node.this)] if isinstance(node, exp.Mul) else [])
        for inner, by in sides:
            scaled, number = _scaled_column(inner), _constant(by)
            factor = (scaled[1] * number if isinstance(node, exp.Mul) else scaled[1] / number) if scaled and number \
                else 0.0
            if factor and math.isfinite(factor):
                return scaled[0], factor
    return None


#: The arithmetic a constant expression may hold.
ARITHMETIC = {exp.Mul: lambda a, b: a * b, exp.Div: lambda a, b: a / b, exp.Add: lambda a, b: a + b,
              exp.Sub: lambda a, b: a - b, exp.Pow: lambda a, b: a ** b}


def _constant(node: exp.Expression) -> float | None:
    """The (finite, real) number a constant expression makes (`10 * 1e18`, `POWER(10, 18)`, `CAST(1e18 AS
    NUMERIC)`); None for anything that reads a column or calls another function."""
    if isinstance(node, (exp.Paren, exp.Cast, exp.TryCast)):
        return _constant(node.this)
    if isinstance(node, exp.Neg):
        inner = _constant(node.this)
        return -inner if inner is not None else None
    if type(node) in ARITHMETIC:
        left, right = _constant(node.this), _constant(node.expression)
        try:
            value = ARITHMETIC[type(node)](left, right) if left is not None and right is not None else None
        except (ArithmeticError, ValueError):
            return None
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
    return _figure(node)


def _amounts_in_base_units(node: exp.Expression, tables: dict[str, Table],
                           shown_units: Mapping[str, Unit]) -> list[tuple[str, Column, Unit]]:
    """The schema columns whose unit `node` keeps and that are stored in a base unit: ("table.column", column, unit)."""
    found = [_schema_column(column, tables) for column in amounts_kept(node)]
    named = [(f"{table.name}.{column.name}", column) for table, column in filter(None, found)]
    return [(name, column, shown_units[name.lower()]) for name, column in named if name.lower() in shown_units]


def _weighed(comparison: exp.Expression) -> list[tuple[exp.Expression, exp.Expression]]:
    """The (amount, figure) pairs a comparison weighs, either way round; BETWEEN weighs its operand against both ends."""
    if isinstance(comparison, exp.Between):
        return [(comparison.this, comparison.args["low"]), (comparison.this, comparison.args["high"])]
    return [(comparison.left, comparison.right), (comparison.right, comparison.left)]


def _figure(node: exp.Expression) -> float | None:
    """The number a plain numeric literal writes; None for anything else."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    return None


def _own_nodes(scope: Scope, *kinds: type[exp.Expression]):
    """The nodes of these kinds in a scope's own SELECT: a nested query's belong to its own scope."""
    return (node for node in scope.expression.find_all(*kinds) if node.find_ancestor(exp.Select) is scope.expression)


def _result_scopes(scope: Scope) -> list[Scope]:
    """The SELECTs whose columns are the result: the query's own, or each branch of a UNION."""
    if scope.set_operation_scopes:
        return [branch for side in scope.set_operation_scopes for branch in _result_scopes(side)]
    return [scope]


def amounts_kept(node: exp.Expression) -> list[exp.Column | exp.Dot]:
    """The columns (or fields of an UNNESTed record) whose unit `node` keeps (see KEEPS_UNIT)."""
    if isinstance(node, (exp.Column, exp.Dot)):
        return [node]
    if isinstance(node, exp.Mul) and any(isinstance(side, exp.Literal) for side in (node.left, node.right)):
        return []
    if isinstance(node, KEEPS_UNIT):
        return [column for child in node.iter_expressions() for column in amounts_kept(child)]
    return []


def _columns_against_literals(comparison: exp.Expression) -> list[tuple[exp.Column, str]]:
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


def _columns_against_words(comparison: exp.Expression) -> list[tuple[exp.Column, str]]:
    """The (column, word) pairs a comparison compares (`'France' IN (Country, Name)` compares the word with each
    column): its literals a number never equals."""
    return [(column, text) for column, text in _columns_against_literals(comparison) if _is_word(text)]


def _schema_column(column: exp.Expression, tables: dict[str, Table]) -> tuple[Table, Column] | None:
    """The schema table and column a scope's column reads: by its source alias once qualified, else the one table of
    the scope that has a column of that name; a field of UNNESTed records (`w.amount`, once qualified a `Dot`) is
    the records' column; None for anything else (an expression, a CTE's column)."""
    if isinstance(column, exp.Dot):  # a field of an UNNESTed record
        records = _records_read(column, tables)
        field = records.column(column.name) if records is not None else None
        return (records, field) if field is not None else None
    if not isinstance(column, exp.Column):
        return None
    owners = [tables.get(column.table.lower())] if column.table else list({id(t): t for t in tables.values()}.values())
    found = [(t, t.column(column.name)) for t in owners if t is not None and t.column(column.name) is not None]
    return found[0] if len(found) == 1 else None


def _is_word(text: str) -> bool:
    """Text a number never equals: it has letters and is not itself a number (`'1e3'`)."""
    try:
        float(text)
    except ValueError:
        return any(ch.isalpha() for ch in text)
    return False


def _check_joins(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """A join condition equating two schema columns that no foreign key links (and that do not share a name)."""
    edges = schema.foreign_key_edges()
    if not edges:
        return
    known = {frozenset({(a.lower(), b.lower()), (c.lower(), d.lower())}) for a, b, c, d in edges}
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for join in scope.expression.args.get("joins") or []:
            on = join.args.get("on")
            if on is None:
                continue
            for eq in on.find_all(exp.EQ):
                sides = [_schema_column(side, tables) for side in (eq.left, eq.right)]
                if None in sides:
                    continue
                a, b = ((table.name.lower(), column.name.lower()) for table, column in sides)
                if frozenset({a, b}) not in known and a[1] != b[1]:
                    findings.warnings.append(f"join {a[0]}.{a[1]} = {b[0]}.{b[1]} is not on a foreign key")
