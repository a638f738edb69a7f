"""A text column compared with a literal of a shape none of its example values has: the filter finds nothing (or,
negated, keeps everything), so the query is sent back with the columns of the same table whose values have that
shape."""

from __future__ import annotations

import re
from typing import Iterator

from sqlglot import exp

from askchain.db.dialects import is_numeric
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Finding

#: Literal shapes a column's example values tell apart: a column none of whose examples has the shape never equals a
#: literal that has it (`trace_address = '0x0000a26b…'`: a call's position '1,0' compared with an address).
LITERAL_SHAPES = {"a hex string": re.compile(r"0x[0-9a-f]*", re.IGNORECASE)}

#: Comparisons whose literal a column's value must have the shape of (LIKE's wildcards aside).
SHAPED_COMPARISONS = (exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike)


class LiteralShapes(Check):
    """A text column compared with a literal of a shape none of its values has."""

    id = "literal_shapes"
    order = 130

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        schema = analysis.schema
        for table, col, literal, _ in analysis.compared_columns(*SHAPED_COMPARISONS):
            shape, pattern = next(((name, pattern) for name, pattern in LITERAL_SHAPES.items()
                                   if pattern.fullmatch(literal.strip("%"))), (None, None))
            if shape is None or is_numeric(col.type, schema.dialect):
                continue  # a number column compared with text is text_against_numbers' finding
            examples = [str(value) for value in col.examples if value is not None]
            if not examples or any(pattern.fullmatch(value) for value in examples):
                continue
            shaped = [c.name for c in table.columns
                      if any(pattern.fullmatch(str(v)) for v in c.examples if v is not None)]
            hint = f": compare {shape} with {', '.join(shaped[:4])}" if shaped else ""
            shown = ", ".join(f"'{value}'" for value in examples[:3])
            yield self.error(f"{table.name}.{col.name} holds values like {shown}, never {shape}{hint}")
            return  # one such finding is enough to send the query back
