"""A grouping by a column that names a thing without identifying it (`GROUP BY t.symbol`): two tokens that share a
symbol (there are many "PEPE"s) become one row with their counts summed, a figure no token has. Grouping by one of
the label's keys beside it (the token's address) keeps them apart and still shows the label. Which columns are
labels, and which keys identify them, is the domain's data (its layer's `labels:`). The rule reads the question:
one asking for the label beside the things ("top tokens ... with their symbols") wants a row per thing; one asking
"by symbol" may group by it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Mapping

from sqlglot import exp

from askchain.db.schema import Table
from askchain.rules.analysis import Analysis, schema_column_name
from askchain.rules.base import Check, Finding


@dataclass(frozen=True)
class LabelsWithKeys(Check):
    """A GROUP BY on a label column ("table.column") with none of its keys grouped beside it."""

    #: "table.column" of a label (lower case) -> the "table.column"s that identify what it labels
    labels: Mapping[str, tuple[str, ...]]

    id = "labels_with_keys"
    order = 105

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        beside = {label for label in self.labels if asked_beside(label.split(".")[1], analysis.question)}
        for scope in analysis.scopes(analysis.tree) if beside else ():
            group = scope.expression.args.get("group")
            if not group:
                continue
            tables = analysis.tables(scope)
            values = [(key, grouped_value(scope.expression, key)) for key in group.expressions]
            named = [(key, value, schema_column_name(value, tables)) for key, value in values]
            grouped = {name: key for key, _, name in named if name}
            # a column of a CTE or subquery keeps its name: `k.token_address` of a CTE of token addresses
            derived = {value.name.lower() for _, value, name in named if isinstance(value, exp.Column) and not name}
            listed = listed_columns(scope.expression, tables)
            for label, key in grouped.items():
                keys = set(self.labels.get(label, ())) if label in beside else set()
                if keys and label not in listed and not keys & (grouped.keys() | listed) \
                        and not {k.split(".")[1] for k in keys} & derived:
                    yield self.error(
                        f"GROUP BY {key.sql(dialect=analysis.schema.dialect)} merges every {label.split('.')[0]} row "
                        f"that shares the {label.split('.')[1]} ({label} is not unique): group by "
                        f"{' or '.join(sorted(keys))} beside it, and show it")
                    return


def asked_beside(word: str, question: str) -> bool:
    """Whether the question asks for a label beside what it ranks or lists ("with their symbols", "and its name")."""
    return re.search(rf"\b(?:with|and|plus)\s+(?:their|its|the)?\s*(?:token\s+)?{re.escape(word)}s?\b", question,
                     re.IGNORECASE) is not None


def listed_columns(select: exp.Select, tables: dict[str, Table]) -> set[str]:
    """"table.column" of each column the SELECT's WHERE keeps to one value or a list (`=` on either side, `IN`)."""
    where = select.args.get("where")
    sides = [side for node in (where.find_all(exp.EQ, exp.In) if where else ())
             for side in ((node.this, node.expression) if isinstance(node, exp.EQ) else (node.this,))]
    return {name for side in sides if (name := schema_column_name(side, tables))}


def grouped_value(select: exp.Select, key: exp.Expression) -> exp.Expression:
    """The expression a GROUP BY key stands for: the projection a position (`GROUP BY 1`) names, else the key."""
    if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(select.expressions):
        return select.expressions[int(key.name) - 1].unalias()
    return key
