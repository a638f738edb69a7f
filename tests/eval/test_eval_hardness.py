"""Spider hardness: the sqlglot reimplementation against the official rules applied to Spider's own parse."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from askchain.eval.hardness import hardness_level, spider_hardness

# ---- the official rules (Spider evaluation.py), run on the `sql` parse stored in dev.json: the oracle ----
_WHERE_LIKE = 9  # WHERE_OPS.index("like")


def _has_agg(unit) -> bool:
    return unit[0] != 0  # AGG_OPS.index("none"); on condition tuples this tests NOT, on "and"/"or" it is True


def _official(sql: dict) -> str:
    conds = sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]
    ao = sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2]
    comp1 = sum(bool(sql[k]) for k in ("where", "groupBy", "orderBy")) + (sql["limit"] is not None)
    comp1 += max(len(sql["from"]["table_units"]) - 1, 0) + ao.count("or")
    comp1 += sum(c[1] == _WHERE_LIKE for c in conds)
    comp2 = sum(isinstance(c[3], dict) + isinstance(c[4], dict) for c in conds)
    comp2 += sum(sql[k] is not None for k in ("intersect", "except", "union"))
    agg = sum(map(_has_agg, sql["select"][1])) + sum(map(_has_agg, sql["where"][::2])) + sum(map(_has_agg, sql["groupBy"]))
    if sql["orderBy"]:
        agg += sum(map(_has_agg, [u[1] for u in sql["orderBy"][1] if u[1]] + [u[2] for u in sql["orderBy"][1] if u[2]]))
    agg += sum(map(_has_agg, sql["having"]))
    others = (agg > 1) + (len(sql["select"][1]) > 1) + (len(sql["where"]) > 1) + (len(sql["groupBy"]) > 1)
    return hardness_level(comp1, comp2, others)


@pytest.fixture(scope="module")
def spider_dev(spider_root) -> list[dict]:
    return json.loads((spider_root / "dev.json").read_text())


def test_agrees_with_official_parse_on_spider_dev(spider_dev):
    pairs = [(_official(q["sql"]), spider_hardness(q["query"])) for q in spider_dev]
    disagreements = [(q["query"], a, b) for q, (a, b) in zip(spider_dev, pairs) if a != b]
    assert not disagreements, disagreements[:5]
    # the level distribution itself is the published one for Spider dev: 248 easy, 446 medium, 174 hard, 166 extra
    assert Counter(a for a, _ in pairs) == {"easy": 248, "medium": 446, "hard": 174, "extra": 166}


@pytest.mark.parametrize(
    "sql, level",
    [
        ("SELECT count(*) FROM singer", "easy"),
        ("SELECT name FROM singer WHERE age > 20", "easy"),
        ("SELECT name, age FROM singer WHERE age > 20", "medium"),
        ("SELECT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T2.x = 1", "medium"),
        ("SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)", "hard"),
        ("SELECT name FROM a INTERSECT SELECT name FROM b", "hard"),
        ("SELECT name FROM a WHERE x = 1 OR y LIKE '%z%' ORDER BY name LIMIT 1", "extra"),
        ("SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1 AND NOT a IN (SELECT b FROM u)", "extra"),
    ],
)
def test_levels_of_small_queries(sql, level):
    assert spider_hardness(sql) == level


def test_unparseable_sql_has_no_level():
    assert spider_hardness("SELECT FROM WHERE (") is None
