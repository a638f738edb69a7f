"""Column aliases: a column the model names by another table's convention, read as the table's own name.

The Ethereum tables name a block's time `block_timestamp`, except `blocks`, where it is `timestamp`; a 1.5B model
writes `blocks.block_timestamp` in about one question in four, and the sample, otherwise often right, then costs a
revision round (~20 s) or is lost. A domain lists such aliases in its semantic layer (`column_aliases`), and each
sample's names are resolved on its parsed tree before validation: only a column its table lacks, resolved to exactly
one table of its scope that declares the alias, is renamed, so a name that exists anywhere in scope is never touched.
The rename edits the written text at the identifier's position, leaving the rest as the model wrote it (the
domain's checks read that text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from askchain.db.schema import Schema, Table
from askchain.generation.sql_text import Edit, apply_edits
from askchain.rules.analysis import Analysis, readable_scopes, source_tables
from askchain.rules.base import Repair, Repaired

#: table name (lower case) -> {alias written: the table's own column}
Aliases = Mapping[str, Mapping[str, str]]


def own_column_names(sql: str, schema: Schema, aliases: Aliases,
                     tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` with each aliased column renamed to its table's own column, and what was renamed ("blocks.block_timestamp
    read as blocks.timestamp"); `sql` unchanged (and no notes) when nothing is renamed or sqlglot cannot read it.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    if not aliases:
        return sql, []
    scopes = readable_scopes(sql, schema.dialect, tree)
    if scopes is None:
        return sql, []
    edits = []
    for scope in scopes:
        tables, outputs = source_tables(scope, schema), _output_aliases(scope)
        edits += [edit for column in scope.columns
                  if (edit := _rename(column, scope, tables, outputs, schema.dialect, aliases))]
    return apply_edits(sql, edits)


def _rename(column: exp.Column, scope: Scope, tables: dict[str, Table], outputs: set[str], dialect: str,
            aliases: Aliases) -> Edit | None:
    """The edit renaming one column if it is an alias of exactly one table it can belong to (`tables`: the scope's
    schema tables; `outputs`: its output names): the identifier's span in the text, what replaces it and the note;
    None otherwise (or when the parser kept no position)."""
    if not column.table and column.name.lower() in outputs:
        return None  # ORDER BY / GROUP BY naming the query's own output
    if column.table:
        candidates = [tables[column.table]] if column.table in tables else []
    elif any(t.column(column.name) for t in tables.values()) or len(tables) < len(scope.sources):
        return None  # a real column of a table in scope, or one a subquery may provide
    else:
        candidates = list({t.name: t for t in tables.values()}.values())
    owners = [(t, own) for t in candidates
              if not t.column(column.name) and (own := aliases.get(t.name.lower(), {}).get(column.name.lower()))
              and t.column(own)]
    if len(owners) != 1:
        return None
    table, own = owners[0]
    span = column.this.meta
    if "start" not in span:
        return None
    text = exp.to_identifier(own, quoted=column.this.quoted).sql(dialect=dialect)
    if column.parent is scope.expression and column.arg_key == "expressions":
        text += f" AS {column.this.sql(dialect=dialect)}"  # a bare projection keeps its output name
    return span["start"], span["end"], text, f"{table.name}.{column.name} read as {table.name}.{own}"


def _output_aliases(scope: Scope) -> set[str]:
    select = scope.expression
    if not isinstance(select, exp.Select):
        return set()
    return {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}


@dataclass(frozen=True)
class ColumnAliases(Repair):
    """A column written by another table's convention renamed to the table's own (a domain names them)."""

    id = "column_aliases"
    order = 60
    #: table (lower case) -> {alias (lower case): the table's own column}
    aliases: Mapping[str, Mapping[str, str]]

    def applies(self, analysis: Analysis) -> bool:
        return bool(self.aliases)

    def repair(self, analysis: Analysis) -> Repaired:
        return own_column_names(analysis.sql, analysis.schema, self.aliases, analysis.parsed_or_none())
