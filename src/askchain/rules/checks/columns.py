"""A column no source of its query has, told the way a reviser can act on. Qualification ties every column to its
source; the column it cannot tie is named with the tables of its SELECT that lack it and their closest columns, or
with why the query cannot read it (a table its FROM lacks, an alias, two tables that both have it, a CTE or
subquery that does not pass it on)."""

from __future__ import annotations

import re
from typing import Iterator, Mapping

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from askchain.db.schema import Schema, Table
from askchain.rules.analysis import Analysis, scope_tables, tables_only
from askchain.rules.base import Check, Finding
from askchain.rules.sql import did_you_mean, unqualified_sql


class UnknownColumns(Check):
    """A column no source has: the finding names the fix, and the name the query asked for in vain."""

    id = "columns"
    order = 20

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        qualified = analysis.qualification()
        if qualified.unresolved is not None:
            message, name, kind = _unresolved_column(qualified.unresolved, qualified.searched, analysis.written,
                                                     analysis.schema)
            yield Finding(self.id, message, (name,) if name else (), kind=kind)


UNRESOLVED_COLUMN = re.compile(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)")


def _unresolved_column(message: str, tree: exp.Expression, written: exp.Expression,
                       schema: Schema) -> tuple[str, str | None, str]:
    """sqlglot's bare "could not be resolved", told the way a reviser can act on: the tables of the SELECT that
    lack the column and their closest columns (a small model often puts a column in the wrong table, e.g.
    `block_timestamp` in blocks, whose time column is `timestamp`). Only when no column there is close does it
    name the tables that have it: pointing at them makes the reviser join a table the question does not need.
    `tree` is the (qualified) tree to search, `written` the query as written, for the column's spelling. Returns the
    message, where it says the column does not exist the column's name, and the finding's kind: "unknown" (no
    table there has it), "unreadable" (the query cannot read it where it names it), "ambiguous" (two tables have
    it), "unresolved" (sqlglot's own message)."""
    found = UNRESOLVED_COLUMN.search(message)
    if not found:
        return message.splitlines()[0].split(". Line:")[0], None, "unresolved"
    wanted = (found.group(1) or found.group(2)).lower()
    name = next((c.name for c in written.find_all(exp.Column) if c.name.lower() == wanted), wanted)
    lacking, reasons = {}, []
    spelled = {identifier.name.lower(): identifier.name for identifier in written.find_all(exp.Identifier)}
    for scope in traverse_scope(tree):
        tables = tables_only(scope_tables(scope, schema))
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
        return (reasons[0][1], None, reasons[0][0]) if reasons else (text, name, "unknown")
    text += " in " + ", ".join(lacking)
    close = did_you_mean(name, [c.name for t in lacking.values() for c in t.columns])
    owners = [t.name for t in schema.tables if t.column(wanted) is not None]
    if close or not owners:
        return text + close, name, "unknown"
    return text + f" ({name} is a column of {', '.join(owners[:3])})", name, "unknown"


def _why_unreadable(scope: Scope, column: exp.Column, tables: dict[str, Table], schema: Schema,
                    spelled: Mapping[str, str]) -> tuple[str, str] | None:
    """Why a query cannot read a column that some table has, as a finding that names the fix: it names a table its
    FROM lacks (`tokens.total_supply` beside `FROM contracts`) or reads under an alias, two of its tables have it
    (`block_timestamp` in a join), or the CTE or subquery it reads does not pass it on; None for none of these. Names
    are given as `spelled` in the query as written (lower case: its spelling). Returns the finding's kind
    ("unreadable" or "ambiguous") and its message."""
    def as_written(text: str) -> str:
        return spelled.get(text.lower(), text)

    name, owner = as_written(column.name), as_written(column.table)
    sources = {alias.lower(): source for alias, source in scope.sources.items()}
    if column.table and column.table.lower() not in sources:
        aliases = [as_written(alias) for alias, source in sources.items()
                   if isinstance(source, exp.Table) and source.name.lower() == column.table.lower()]
        table = schema.table(column.table)
        if aliases:
            return "unreadable", f"Column '{owner}.{name}' cannot be read: that query reads {owner} as " \
                                 f"{aliases[0]}; write {aliases[0]}.{name}"
        return "unreadable", (
            f"Column '{owner}.{name}' cannot be read: {owner} is not in the FROM of that query; JOIN {owner} to read it"
            if table is not None and table.column(name) is not None else
            f"Column '{owner}.{name}' cannot be read: that query has no table or alias named {owner}")
    having = [as_written(alias) for alias, table in tables.items() if table.column(name) is not None]
    if not column.table and len(having) > 1:
        return "ambiguous", (f"Column '{name}' is ambiguous: {' and '.join(having)} both have it; qualify it "
                             f"({having[0]}.{name} or {having[1]}.{name})")
    read = {column.table.lower(): sources[column.table.lower()]} if column.table else {} if having else sources
    derived = [(alias, source.expression) for alias, source in read.items() if isinstance(source, Scope)
               and isinstance(source.expression, exp.Select)
               and name.lower() not in {n.lower() for n in source.expression.named_selects}
               and any(t.column(name) is not None for t in scope_tables(source, schema).values())]
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
        return "unreadable", (f"Column '{name}' cannot be read: {where} selects it only as "
                              f"{unqualified_sql(shown, schema.dialect)} AS {as_written(computed.alias)}; read "
                              f"{as_written(computed.alias)}")
    grouped = " (and GROUP BY)" if select.args.get("group") else ""
    return "unreadable", (f"Column '{name}' cannot be read: {where} does not select it; add it to the "
                          f"SELECT{grouped} of {where}")
