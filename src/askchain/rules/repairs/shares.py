"""A share counted among rows that WHERE already narrowed to the ones it counts has that condition taken out of WHERE.

"What share of token transfers were NFT transfers?" is `COUNTIF(c.is_erc721) / COUNT(*)` over all transfers. A 1.5B
model often writes the share's own condition into WHERE as well (`... AND c.is_erc721 = TRUE`): every row left is one
the numerator counts, and the query answers 1 whatever the data. Validation finds it (`shares_of_the_filter`), and a
revision asked to take the condition out of WHERE often rewrites the rest of the query instead. A share's condition
says what it counts, never which rows it counts among, so the edit is askchain's: the WHERE conditions the share
restates are dropped where they are written, and the share is taken among the rows the rest of WHERE keeps. A
condition kept by the WHERE of a CTE the share reads stays, for revision: other parts of the query may read it."""

from __future__ import annotations

from sqlglot import exp

from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired
from askchain.rules.filtered_shares import shares_of_the_filter
from askchain.rules.repairs.where_conditions import drop_conditions
from askchain.rules.sql import condition_key


def shares_among_all_rows(sql: str, dialect: str, tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` without the WHERE conditions the first share of the filter in it restates, each with the AND that joined
    it, and what was dropped; `sql` unchanged (and no notes) when there is no such share, one of the conditions
    comes from another WHERE than the share's own, or one is not found as written.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    tree = readable(sql, dialect, tree)
    if tree is None:
        return sql, []
    selects = list(tree.find_all(exp.Select))
    for found in shares_of_the_filter(tree, dialect):
        if any(where != "WHERE" for _, where in found.restated):
            continue
        at = next(i for i, select in enumerate(selects) if select is found.select)
        dropped = drop_conditions(sql, dialect, at, [condition_key(c, dialect) for c, _ in found.restated],
                                  lambda condition: f"dropped WHERE's {condition}: the share counts those rows among "
                                                    "all of them, so WHERE cannot keep only them")
        if dropped:
            return dropped
    return sql, []


class SharesAmongAllRows(Repair):
    """A share's own condition taken out of WHERE, where it made the share 1."""

    id = "shares_among_all_rows"
    order = 30

    def repair(self, analysis: Analysis) -> Repaired:
        return shares_among_all_rows(analysis.sql, analysis.dialect, analysis.parsed_or_none(analysis.dialect))
