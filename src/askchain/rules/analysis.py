"""One analysis per candidate, built once and handed to every rule: the query's parsed tree, its qualified tree
(every column tied to its source), its scopes, the schema tables each scope reads by alias (the records of an
UNNESTed struct array included), and what the question brings (its words, its definitions, the known functions).
A repair that changes the text makes the next analysis (`of`); parses and scopes are made on first use."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.qualify_columns import validate_qualify_columns
from sqlglot.optimizer.scope import Scope, build_scope, traverse_scope
from sqlglot.schema import MappingSchema

from askchain.db.dialects import column_type, parse_one
from askchain.db.schema import Column, Schema, Table
from askchain.rules.sql import columns_against_literals
from askchain.semantic.layer import Reading


class Qualified(NamedTuple):
    """The qualified tree (None where sqlglot cannot qualify the query), and the message of a column no source has,
    with the tree it names that column in."""

    tree: exp.Expression | None
    unresolved: str | None = None
    searched: exp.Expression | None = None


@dataclass
class Analysis:
    """A candidate as every rule reads it. `question` is what the query answers; `asked` adds the run's hint (a
    planned step's earlier rows), whose words figures may come from; `readings` the domain definitions the question
    calls for (None: not looked up); `errors_of` validates another text (a repair that must not make new errors)."""

    sql: str
    schema: Schema
    dialect: str = ""
    question: str = ""
    asked: str = ""
    readings: Sequence[Reading] | None = None
    known_functions: set[str] | None = None
    errors_of: Callable[[str], list[str]] | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.dialect = self.dialect or self.schema.dialect
        self.asked = self.asked or self.question

    def of(self, sql: str) -> Analysis:
        """The analysis of another text of the same candidate (what a repair left)."""
        return self if sql == self.sql else replace(self, sql=sql, _cache={})

    def _memo(self, key, make):
        """`make()` once; an exception it raised is raised again on every later use."""
        if key not in self._cache:
            try:
                self._cache[key] = (make(), None)
            except Exception as exc:  # noqa: BLE001 - kept to raise again, whatever its type
                self._cache[key] = (None, exc)
        value, error = self._cache[key]
        if error is not None:
            raise error
        return value

    def parsed(self, dialect: str | None = None) -> exp.Expression | None:
        """The query as written, parsed in `dialect` (the schema's by default); raises sqlglot's error."""
        dialect = dialect or self.schema.dialect
        return self._memo(("parsed", dialect), lambda: parse_one(self.sql, dialect))

    def parsed_or_none(self, dialect: str | None = None) -> exp.Expression | None:
        """`parsed`, or None where sqlglot cannot read the text: what a repair reads instead of parsing it again (given
        None, it parses the text itself and fails as it always has)."""
        try:
            return self.parsed(dialect)
        except SqlglotError:
            return None

    @property
    def written(self) -> exp.Expression:
        """The tree as written: what rules about the author's own names, stars and shape read."""
        return self.parsed()

    def qualification(self) -> Qualified:
        """The written tree qualified against the schema, once; a failure inside is raised once, then read as no
        qualification (the rules read the written tree)."""
        if "qualified" in self._cache and self._cache["qualified"][1] is not None:
            return Qualified(None)
        return self._memo("qualified", lambda: _qualify(self.written, self.schema))

    @property
    def tree(self) -> exp.Expression:
        """The qualified tree where there is one, else the written one: what rules resolving names read."""
        return self.qualification().tree or self.written

    def scopes(self, tree: exp.Expression | None = None) -> list[Scope]:
        """The scopes of `tree` (the qualified tree by default), innermost first."""
        tree = self.tree if tree is None else tree
        return self._memo(("scopes", id(tree)), lambda: traverse_scope(tree))

    def root(self, tree: exp.Expression | None = None) -> Scope | None:
        """The outermost scope of `tree` (the qualified tree by default)."""
        tree = self.tree if tree is None else tree
        return self._memo(("root", id(tree)), lambda: build_scope(tree))

    def tables(self, scope: Scope) -> dict[str, Table]:
        """`scope_tables` of a scope of this analysis, once."""
        return self._memo(("tables", id(scope)), lambda: scope_tables(scope, self.schema))

    def scoped_nodes(self, *kinds: type[exp.Expression],
                     of_scope: Callable[[Scope], Any] | None = None) -> Iterator[tuple[exp.Expression, Any]]:
        """Each node of these kinds in the qualified tree, scope by scope, with what its scope gives it (its tables,
        or `of_scope(scope)`, made once a scope): one walk for the checks that judge a node where it stands."""
        of_scope = of_scope or self.tables
        for scope in self.scopes():
            given = of_scope(scope)
            for node in own_nodes(scope, *kinds):
                yield node, given

    def compared_columns(self, *kinds: type[exp.Expression]) -> Iterator[tuple[Table, Column, str, dict[str, Table]]]:
        """(table, column, text, the scope's tables) for each schema column a comparison of these kinds compares with
        a string literal: one loop for the checks of a column against the text it is compared with."""
        for comparison, tables in self.scoped_nodes(*kinds):
            for column, text in columns_against_literals(comparison):
                found = schema_column(column, tables)
                if found is not None:
                    yield found[0], found[1], text, tables


def _qualify(written: exp.Expression, schema: Schema) -> Qualified:
    try:
        tree = qualify(written.copy(), schema=sqlglot_schema(schema), dialect=schema.dialect,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
    except OptimizeError as exc:
        return Qualified(None, str(exc), written)
    except SqlglotError:
        return Qualified(None)  # qualification is best effort on constructs sqlglot cannot resolve
    try:
        validate_qualify_columns(tree)
    except OptimizeError as exc:
        return Qualified(tree, str(exc), tree)
    return Qualified(tree)


def readable(sql: str, dialect: str, tree: exp.Expression | None = None) -> exp.Expression | None:
    """`tree` where the caller has it, else `sql` parsed; None where sqlglot cannot read it: how every repair begins
    (an unreadable query is left to validation), written once."""
    try:
        return parse_one(sql, dialect) if tree is None else tree
    except SqlglotError:
        return None


def readable_scopes(sql: str, dialect: str, tree: exp.Expression | None = None) -> list[Scope] | None:
    """The scopes of `readable`'s tree; None where sqlglot cannot read it or its scopes: shared by the repairs that
    rewrite columns scope by scope."""
    tree = readable(sql, dialect, tree)
    try:
        return traverse_scope(tree) if tree is not None else None
    except SqlglotError:
        return None


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


def scope_tables(scope, schema: Schema) -> dict:
    """The schema tables a query scope reads, by lower-cased alias (tables the schema lacks are left out), and the
    records of a struct array it UNNESTs (`FROM blocks, UNNEST(withdrawals) AS w`: `w` reads a table
    "blocks.withdrawals" of the struct's fields), so `w.amount` is a schema column like any other. The array may be
    an enclosing query's (`(SELECT SUM(...) FROM UNNEST(b.withdrawals) AS w)`); the records go by the alias as written
    (`w`) and by sqlglot's name for the UNNEST once qualified (`_0`, read as `_0.w.amount`)."""
    tables = lowered(source_tables(scope, schema))
    for alias, source in scope.sources.items():
        unnest = source.expression if isinstance(source, Scope) else None
        if isinstance(unnest, exp.Unnest) and len(unnest.expressions) == 1:
            records = next(filter(None, (struct_records(unnest.expressions[0], lowered(source_tables(outer, schema)),
                                                         schema.dialect) for outer in enclosing_scopes(scope))), None)
            if records is not None:
                tables.update({name.lower(): records for name in (alias, *unnest.alias_column_names)})
    return tables


def source_tables(scope: Scope, schema: Schema) -> dict[str, Table]:
    """The scope's sources that are schema tables, by the name the query refers to them with (as written)."""
    tables = {alias: schema.table(".".join(p.name for p in source.parts))
              for alias, source in scope.sources.items() if isinstance(source, exp.Table)}
    return {alias: table for alias, table in tables.items() if table is not None}


def lowered(tables: dict[str, Table]) -> dict[str, Table]:
    """Tables by lower-cased alias: how validation looks up a column's qualifier."""
    return {alias.lower(): table for alias, table in tables.items()}


def enclosing_scopes(scope: Scope) -> Iterator[Scope]:
    """The scope and those enclosing it, whose sources a correlated column may name."""
    while scope is not None:
        yield scope
        scope = scope.parent


def tables_only(tables: dict[str, Table]) -> dict[str, Table]:
    """The tables of `scope_tables` without UNNESTed records: what a finding may tell a reviser to qualify by."""
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


def records_read(dot: exp.Dot, tables: dict[str, Table]) -> Table | None:
    """The table a field access reads from (`_0.w.amount` once qualified: the records named `_0`), None when the
    access is on no column."""
    return tables.get((dot.this.table or dot.this.name).lower()) if isinstance(dot.this, exp.Column) else None


def struct_records(array: exp.Expression, tables: dict[str, Table], dialect: str) -> Records | None:
    """The table of records an array-of-structs column holds (one column per field), None for any other array."""
    found = schema_column(array, tables)
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


def schema_column(column: exp.Expression, tables: dict[str, Table]) -> tuple[Table, Column] | None:
    """The schema table and column a scope's column reads: by its source alias once qualified, else the one table of
    the scope that has a column of that name; a field of UNNESTed records (`w.amount`, once qualified a `Dot`) is
    the records' column; None for anything else (an expression, a CTE's column)."""
    if isinstance(column, exp.Dot):  # a field of an UNNESTed record
        records = records_read(column, tables)
        field = records.column(column.name) if records is not None else None
        return (records, field) if field is not None else None
    if not isinstance(column, exp.Column):
        return None
    owners = [tables.get(column.table.lower())] if column.table else list({id(t): t for t in tables.values()}.values())
    found = [(t, t.column(column.name)) for t in owners if t is not None and t.column(column.name) is not None]
    return found[0] if len(found) == 1 else None


def schema_column_name(column: exp.Expression, tables: dict[str, Table]) -> str | None:
    """"table.column" (lower case) of the schema column a scope's column reads (`schema_column`), or None."""
    found = schema_column(column, tables)
    return f"{found[0].name}.{found[1].name}".lower() if found else None


def own_nodes(scope: Scope, *kinds: type[exp.Expression]):
    """The nodes of these kinds in a scope's own SELECT: a nested query's belong to its own scope."""
    return (node for node in scope.expression.find_all(*kinds) if node.find_ancestor(exp.Select) is scope.expression)


def result_scopes(scope: Scope) -> list[Scope]:
    """The SELECTs whose columns are the result: the query's own, or each branch of a UNION."""
    if scope.set_operation_scopes:
        return [branch for side in scope.set_operation_scopes for branch in result_scopes(side)]
    return [scope]
