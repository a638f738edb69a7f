"""Order and limit over a table the layer built itself (after a step of its own over boring-semantic-layer's result,
which then carries neither): one way of writing a (column, direction) order as ibis sort keys."""

from __future__ import annotations

import ibis


def sort_keys(table, order: list[tuple[str, str]]) -> list:
    """The (column, direction) pairs as ibis sort keys over `table`."""
    return [ibis.desc(table[f]) if d == "desc" else table[f] for f, d in order]


def ordered_and_limited(table, order: list[tuple[str, str]], limit: int | None):
    """`table` in the order of its (column, direction) pairs, its first `limit` rows."""
    table = table.order_by(sort_keys(table, order)) if order else table
    return table.limit(limit) if limit else table
