"""A column qualified by a name its query has no table or alias for is read from the one table there that has it.

A 1.5B model often qualifies a column with an alias it never declared (`t.max_priority_fee_per_gas` beside `FROM
transactions`, `t.token_address` beside `JOIN token_transfers tt`), or with a table it does not read
(`traces.transaction_type` in a query over transactions). The query cannot run, and a revision asked to fix it
often rewrites the rest. Where exactly one table the column's query reads has a column of that name, that table is
the one meant, and the qualifier is written as the query's name for it; where none or several have it (a table the
query lacks, an ambiguous name), the query is left to validation, which names the fix."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from askchain.db.schema import Schema
from askchain.generation.sql_text import Edit, apply_edits
from askchain.rules.analysis import Analysis, enclosing_scopes, readable_scopes, source_tables
from askchain.rules.base import Repair, Repaired


def known_qualifiers(sql: str, schema: Schema, tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` with each unknown qualifier written as the name of the one table in its query that has the column, and
    what was rewritten ("t.value read as tx.value"); unchanged (no notes) when there is none or sqlglot cannot read
    it. `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    scopes = readable_scopes(sql, schema.dialect, tree)
    if scopes is None:
        return sql, []
    edits = [edit for scope in scopes for column in scope.columns if (edit := _requalify(column, scope, schema))]
    return apply_edits(sql, edits)


def _requalify(column: exp.Column, scope: Scope, schema: Schema) -> Edit | None:
    """The edit of one column's qualifier when no query it may belong to (its own or an enclosing one) has a source
    of that name and exactly one source of its own query has the column (a table that has it, or a CTE or subquery
    that selects it); None otherwise."""
    qualifier = column.args.get("table")
    if not isinstance(qualifier, exp.Identifier) or column.args.get("db") or "start" not in qualifier.meta:
        return None
    if any(qualifier.name.lower() in {name.lower() for name in s.sources} for s in enclosing_scopes(scope)):
        return None
    tables = source_tables(scope, schema)
    derived = {id(source): name for name, source in scope.sources.items()  # a CTE read under an alias: the alias
               if isinstance(source, Scope) and isinstance(source.expression, exp.Select)
               and column.name.lower() in {output.lower() for output in source.expression.named_selects}}
    owners = [name for name, table in tables.items() if table.column(column.name)] + list(derived.values())
    if len(owners) != 1:
        return None
    written = exp.to_identifier(owners[0]).sql(dialect=schema.dialect)
    return (qualifier.meta["start"], qualifier.meta["end"], written,
            f"{qualifier.name}.{column.name} read as {owners[0]}.{column.name}")


class KnownQualifiers(Repair):
    """An unknown qualifier written as the one table of its query that has the column."""

    id = "qualifiers"
    order = 10

    def repair(self, analysis: Analysis) -> Repaired:
        return known_qualifiers(analysis.sql, analysis.schema, analysis.parsed_or_none())
