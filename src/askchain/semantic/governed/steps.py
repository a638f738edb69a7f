"""A plan step's filter taking an earlier step's result as its values
(`{"field": "from_address", "op": "in", "value": {"step": 1}}`): no value is copied through the model (an address
cut short matches nothing). The layer compiles the filter with a placeholder value; the plan
(askchain.semantic.governed.plans) swaps it for the values of that step's CTE.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp

DIALECT = "bigquery"
_PLACEHOLDER = "askchain_step_{}"
_PLACEHOLDER_PATTERN = re.compile(r"askchain_step_(\d+)")


class StepRef(BaseModel):
    """A filter value that stands for the first column of an earlier step's result."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1)


def placeholder(step: int) -> str:
    return _PLACEHOLDER.format(step)


def placeholder_step(node: exp.Expression) -> int | None:
    """The earlier step whose values `node` stands for, where it is a placeholder list (`x IN ('askchain_step_1')`)."""
    values = node.expressions if isinstance(node, exp.In) else []
    found = len(values) == 1 and isinstance(values[0], exp.Literal) and values[0].is_string \
        and _PLACEHOLDER_PATTERN.fullmatch(values[0].this)
    return int(found.group(1)) if found else None
