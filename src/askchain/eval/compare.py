"""Result comparators: is a predicted result the gold result? Pure functions, one per benchmark convention.

Each takes (gold_columns, gold_rows, pred_columns, pred_rows, order_matters) and returns a bool.
- `bird`: BIRD's execution accuracy, set(pred rows) == set(gold rows); columns must line up as written.
- `spider`: the Spider test-suite convention: rows compared as multisets (as sequences when the gold query
  orders its rows), columns in any order (a permutation of the predicted columns must match the gold).
- `spider2`: Spider 2.0's convention: every gold column must equal some predicted column (extra predicted
  columns are fine), numbers within 1e-2, each column compared sorted unless order matters.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Callable, Sequence

Rows = Sequence[Sequence[Any]]
Comparator = Callable[[Sequence[str], Rows, Sequence[str], Rows, bool], bool]

TOLERANCE = 1e-2


def hashable(value: Any) -> Any:
    """A hashable stand-in for a cell: lists/structs become tuples, NaN becomes None."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), hashable(v)) for k, v in value.items()))
    return value


def _rows(rows: Rows) -> list[tuple]:
    return [tuple(hashable(v) for v in row) for row in rows]


def bird_ex(gold_columns, gold_rows, pred_columns, pred_rows, order_matters=False) -> bool:
    """BIRD EX: the sets of row tuples are equal (order, duplicates and column names ignored)."""
    return set(_rows(pred_rows)) == set(_rows(gold_rows))


def spider_ex(gold_columns, gold_rows, pred_columns, pred_rows, order_matters=False) -> bool:
    """Spider EX: some column permutation makes the row multisets (or sequences, if ordered) equal."""
    gold, pred = _rows(gold_rows), _rows(pred_rows)
    if len(gold) != len(pred):
        return False
    if not gold:  # as in the test suite: two empty results are equal whatever their columns
        return True
    width = len(gold[0])
    if width != len(pred[0]):
        return False
    target = gold if order_matters else Counter(gold)
    for permutation in _column_matchings(gold, pred, width):
        permuted = [tuple(row[i] for i in permutation) for row in pred]
        if (permuted if order_matters else Counter(permuted)) == target:
            return True
    return False


def _column_matchings(gold: list[tuple], pred: list[tuple], width: int):
    """Bijections gold column -> predicted column whose value multisets agree (pruning before full checks).

    Predicted columns holding identical values are interchangeable, so only one of them is tried at each step.
    """
    gold_bags = [Counter(row[j] for row in gold) for j in range(width)]
    pred_columns = list(zip(*pred))
    pred_bags = [Counter(column) for column in pred_columns]
    options = [[i for i in range(width) if pred_bags[i] == gold_bags[j]] for j in range(width)]

    def extend(chosen: list[int]):
        if len(chosen) == width:
            yield tuple(chosen)
            return
        tried = set()
        for i in options[len(chosen)]:
            if i not in chosen and pred_columns[i] not in tried:
                tried.add(pred_columns[i])
                yield from extend([*chosen, i])

    return extend([])


def spider2_ex(gold_columns, gold_rows, pred_columns, pred_rows, order_matters=False) -> bool:
    """Spider 2.0: each gold column vector matches some predicted column vector (tolerance 1e-2)."""
    if len(gold_rows) != len(pred_rows):
        return False
    gold_vectors = list(zip(*gold_rows)) if gold_rows else [() for _ in gold_columns]
    pred_vectors = list(zip(*pred_rows)) if pred_rows else [() for _ in pred_columns]
    return all(any(_vectors_match(g, p, order_matters) for p in pred_vectors) for g in gold_vectors)


def _vectors_match(gold: Sequence[Any], pred: Sequence[Any], order_matters: bool) -> bool:
    gold, pred = [hashable(v) for v in gold], [hashable(v) for v in pred]
    if not order_matters:
        gold, pred = sorted(gold, key=_sort_key), sorted(pred, key=_sort_key)
    return all(_cells_match(a, b) for a, b in zip(gold, pred))


def _sort_key(value: Any) -> tuple:
    number = _number(value)
    return (value is None, number is None, number if number is not None else 0.0, str(value))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    return None


def _cells_match(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return math.isclose(x, y, abs_tol=TOLERANCE)
    if isinstance(a, (date, datetime, time)) or isinstance(b, (date, datetime, time)):
        return str(a) == str(b)
    return a == b


COMPARATORS: dict[str, Comparator] = {"bird": bird_ex, "spider": spider_ex, "spider2": spider2_ex}
