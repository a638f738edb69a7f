"""One figure over several values a filter lists, where the question asks for each of them ("the average gas price
of type 0 and of type 2 transactions, of each": `SELECT AVG(gas_price) ... WHERE transaction_type IN (0, 2)`): the
values are filtered as asked, and the one row looks like an answer, but it mixes them. Grouped by the filtered
column, the result has the row per value asked for. The semantic generator does the same
(askchain.generation.semantic_fit.each_listed_value_when_asked)."""

from __future__ import annotations

from typing import Iterator

from sqlglot import exp

from askchain.generation.semantic_fit import ASKS_FOR_EACH_NAMED
from askchain.rules.analysis import Analysis, result_scopes
from askchain.rules.base import Check, Finding
from askchain.rules.sql import owned_by


class EachListedValue(Check):
    """One aggregate row over the values an IN list names, where the question asks for each."""

    id = "each_listed_value"
    order = 102

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        if not ASKS_FOR_EACH_NAMED.search(analysis.asked):
            return
        tree, dialect = analysis.written, analysis.schema.dialect
        root = analysis.root(tree)
        for select in (scope.expression for scope in result_scopes(root)) if root else ():
            if not isinstance(select, exp.Select) or select.args.get("group") or select.find(exp.Window) \
                    or not all(owned_by(select, p, exp.AggFunc) for p in select.expressions):
                continue
            where = select.args.get("where")
            for listed in where.find_all(exp.In) if where else ():
                values = listed.expressions
                if isinstance(listed.this, exp.Column) and len(values) > 1 \
                        and all(isinstance(v, exp.Literal) for v in values) and len({v.sql() for v in values}) > 1:
                    column = listed.this.sql(dialect=dialect)
                    yield self.error(
                        f"the question asks for each of the values {listed.sql(dialect=dialect)} lists, and the query "
                        f"gives one figure for them all: GROUP BY {column} and select {column} beside the figures")
                    return
