"""An array column compared, aggregated or read as text as one value (`function_sighashes = '0xa9059cbb'`,
`COUNT(DISTINCT function_sighashes)`, `SUBSTRING(topics, 1, 1)`): the query fails, or counts rows where elements
were meant. The finding names the dialect's membership test and element count. Elements reached through UNNEST or an
offset are values."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.db.dialects import ARRAY_IDIOMS, column_type
from askchain.rules.analysis import Analysis, schema_column
from askchain.rules.base import Check, Finding
from askchain.rules.sql import COMPARISONS

#: Uses of an array column as if it were one value: compared, matched, or aggregated (counts rows, not elements).
ARRAY_MISUSES = (*COMPARISONS, exp.Like, exp.ILike, exp.Count, exp.Min, exp.Max, exp.Sum, exp.Avg, exp.Distinct,
                 exp.Substring, exp.Lower, exp.Upper, exp.Left, exp.Right)


class ArraysAsValues(Check):
    """An array column used as one value."""

    id = "arrays_as_values"
    order = 120

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        tree, schema = analysis.tree, analysis.schema
        if schema.dialect not in ARRAY_IDIOMS:
            return
        member, length = ARRAY_IDIOMS[schema.dialect]
        for scope in analysis.scopes(tree):
            tables = analysis.tables(scope)
            for column in scope.columns:
                if not isinstance(column.parent, ARRAY_MISUSES) or isinstance(column.parent, exp.In) and column is not column.parent.this:
                    continue
                found = schema_column(column, tables)
                if found is None or not column_type(found[1].type, schema.dialect).is_type(exp.DataType.Type.ARRAY):
                    continue
                table, col = found
                yield self.error(
                    f"{table.name}.{col.name} is an array ({col.type}), not one value: test an element with "
                    f"{member.format(col=col.name)}, count its elements with {length.format(col=col.name)}, or UNNEST it")
                return  # one such finding is enough to send the query back
