"""The three comparators on tricky cases: floats, NULLs, column permutations, duplicates, ordering."""

from __future__ import annotations

from decimal import Decimal

import pytest

from askchain.eval.compare import bird_ex, spider2_ex, spider_ex

AB = ["a", "b"]
CASES = [
    # name, gold rows, pred columns, pred rows, order_matters, expected (bird, spider, spider2)
    ("identical", [(1, "x"), (2, "y")], AB, [(1, "x"), (2, "y")], False, (True, True, True)),
    ("rows reordered", [(1, "x"), (2, "y")], AB, [(2, "y"), (1, "x")], False, (True, True, True)),
    ("rows reordered, order matters", [(1, "x"), (2, "y")], AB, [(2, "y"), (1, "x")], True, (True, False, False)),
    ("columns swapped", [(1, "x"), (2, "y")], ["b", "a"], [("x", 1), ("y", 2)], False, (False, True, True)),
    ("swapped and reordered, ordered", [(1, "x"), (2, "y")], ["b", "a"], [("x", 1), ("y", 2)], True, (False, True, True)),
    ("duplicates lost", [(1,), (1,), (2,)], ["a"], [(1,), (2,)], False, (True, False, False)),
    ("duplicate counts differ", [(1,), (1,), (2,)], ["a"], [(1,), (2,), (2,)], False, (True, False, False)),
    ("float off by 1e-3", [(0.333,)], ["a"], [(0.3333333,)], False, (False, False, True)),
    ("float off by 0.1", [(0.3,)], ["a"], [(0.4,)], False, (False, False, False)),
    ("int vs float", [(2,)], ["a"], [(2.0,)], False, (True, True, True)),
    ("decimal vs float", [(Decimal("1.50"),)], ["a"], [(1.5,)], False, (True, True, True)),
    ("NULL vs NULL", [(None, 1)], AB, [(None, 1)], False, (True, True, True)),
    ("NULL vs 0", [(None,)], ["a"], [(0,)], False, (False, False, False)),
    ("NaN counts as NULL", [(None,)], ["a"], [(float("nan"),)], False, (True, True, True)),
    ("extra predicted column", [(1,), (2,)], AB, [(1, "x"), (2, "y")], False, (False, False, True)),
    ("missing column", [(1, "x")], ["a"], [(1,)], False, (False, False, False)),
    ("both empty", [], ["z"], [], False, (True, True, True)),
    ("empty vs rows", [(1,)], ["a"], [], False, (False, False, False)),
    ("columns with same values need the row pairing", [(1, 2), (2, 1)], AB, [(1, 1), (2, 2)], False, (False, False, True)),
    ("nested values", [([1, 2], {"k": 1})], AB, [([1, 2], {"k": 1})], False, (True, True, True)),
]


@pytest.mark.parametrize("name, gold, pred_columns, pred, order_matters, expected", CASES, ids=[c[0] for c in CASES])
def test_comparators(name, gold, pred_columns, pred, order_matters, expected):
    gold_columns = AB[: len(gold[0])] if gold else ["z"]
    got = tuple(fn(gold_columns, gold, pred_columns, pred, order_matters) for fn in (bird_ex, spider_ex, spider2_ex))
    assert got == expected


def test_spider_permutation_search_handles_many_identical_columns():
    gold = [tuple(range(8))] * 3
    pred = [tuple(reversed(range(8)))] * 3
    assert spider_ex(list("abcdefgh"), gold, list("abcdefgh"), pred, False)
    assert not spider_ex(list("abcdefgh"), gold, list("abcdefgh"), [(0,) * 8] * 3, False)
    # 14 interchangeable NULL columns and a mismatch in the last one: 14! orderings if symmetry were not pruned
    width = 15
    gold = [(None,) * (width - 1) + (i,) for i in range(3)]
    pred = [(None,) * (width - 1) + (i + 1,) for i in range(3)]
    assert not spider_ex(["c"] * width, gold, ["c"] * width, pred, False)
    assert spider_ex(["c"] * width, gold, ["c"] * width, [(i,) + (None,) * (width - 1) for i in range(3)], False)


def test_spider2_sorts_numbers_numerically_within_tolerance():
    gold = [(9.999,), (10.0,), (100,)]
    pred = [(100.001,), (10.004,), (9.995,)]
    assert spider2_ex(["a"], gold, ["a"], pred, False)
    assert not spider2_ex(["a"], gold, ["a"], pred, True)
