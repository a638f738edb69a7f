"""Multi-step questions through the layer: a filter may take an earlier step's result as its values
(`{"field": "from_address", "op": "in", "value": {"step": 1}}`), and the layer composes that step's query into the
new one as a subquery. The last step's SQL is then the whole question as one query the user can run, and no value
is copied through the model (an address cut short matches nothing).

The layer compiles the filter with a placeholder value; `compose` swaps the placeholder for the step's query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

import sqlglot
from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp

from askchain.semantic.governed.sql import as_analysts_write

DIALECT = "bigquery"
_PLACEHOLDER = "askchain_step_{}"
_PLACEHOLDER_PATTERN = re.compile(r"askchain_step_(\d+)")


class StepRef(BaseModel):
    """A filter value that stands for the first column of an earlier step's result."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1)


@dataclass(frozen=True)
class EarlierStep:
    """An answered step as a later step's filter sees it: its question, its SQL and the column it found."""

    number: int
    question: str
    sql: str
    column: str
    rows: int

    def line(self) -> str:
        return f"step {self.number}: {self.question} (its result: column {self.column}, {self.rows} rows)"


def placeholder(step: int) -> str:
    return _PLACEHOLDER.format(step)


def placeholder_step(node: exp.Expression) -> int | None:
    """The earlier step whose values `node` stands for, where it is a placeholder list (`x IN ('askchain_step_1')`)."""
    values = node.expressions if isinstance(node, exp.In) else []
    found = len(values) == 1 and isinstance(values[0], exp.Literal) and values[0].is_string \
        and _PLACEHOLDER_PATTERN.fullmatch(values[0].this)
    return int(found.group(1)) if found else None


def compose(sql: str, steps: Mapping[int, EarlierStep]) -> str:
    """`sql` with each placeholder list (`x IN ('askchain_step_1')`) replaced by that step's values as a subquery."""
    if not _PLACEHOLDER_PATTERN.search(sql):
        return sql

    def swap(node: exp.Expression) -> exp.Expression:
        number = placeholder_step(node)
        if number is None:
            return node
        step = steps[number]
        inner = sqlglot.parse_one(step.sql, read=DIALECT)
        values_of = exp.select(exp.column(step.column, table=f"step_{step.number}")).from_(
            exp.alias_(exp.Subquery(this=inner), f"step_{step.number}", table=True))
        return exp.In(this=node.this, query=exp.Subquery(this=values_of))

    return as_analysts_write(sqlglot.parse_one(sql, read=DIALECT).transform(swap).sql(dialect=DIALECT, pretty=True))
