import pytest

from askchain.eval.datasets import Example
from askchain.eval.values import ValueAudit, gold_literals, hint_value


@pytest.mark.parametrize("sql, dialect, literals", [
    ("SELECT name FROM singer WHERE country = 'France'", "sqlite", {"france"}),
    ('SELECT name FROM t WHERE lang = "English" AND title LIKE \'%Hey%\'', "sqlite", {"english", "hey"}),
    ("SELECT COUNT(*) FROM t WHERE x > 3", "sqlite", set()),
    ("SELECT * FROM `p.d.tokens` WHERE symbol = 'USDT'", "bigquery", {"usdt"}),
    ("not sql at all (", "sqlite", set()),
])
def test_gold_literals(sql, dialect, literals):
    assert gold_literals(sql, dialect) == literals


def test_hint_value_unquotes():
    assert hint_value("people.name = 'O''Brien '") == "o'brien"


def test_audit_counts_precision_and_coverage():
    audit = ValueAudit()
    ask = lambda q: Example(q, "db", q, "")  # noqa: E731
    audit.add(ask("q1"), ["t.c = 'France'", "t.c = 'Date'"], {"france"})
    audit.add(ask("q2"), ["t.c = 'Kirov Orchestra'"], set())
    audit.add(ask("q3"), [], {"haiti"})
    assert (audit.hints, audit.relevant_hints, audit.questions_with_hints) == (3, 1, 2)
    assert audit.precision == pytest.approx(1 / 3)
    assert (audit.covered, audit.questions_with_literals, audit.coverage) == (1, 2, 0.5)
    assert audit.rows[0]["relevant"] == ["t.c = 'France'"]


def test_audit_on_spider_questions_finds_their_values(spider_root, tmp_path):
    pytest.importorskip("datasketch")
    from askchain.config import Settings
    from askchain.eval.datasets import load_spider
    from askchain.eval.values import audit_values

    dataset = load_spider(spider_root)
    chosen = [e for e in dataset.examples if e.db_id == "student_transcripts_tracking" and "Haiti" in e.question]
    settings = Settings(paths={"cache_dir": tmp_path / "cache", "data_dir": tmp_path / "data"})
    audit = audit_values(dataset, chosen, settings)
    assert audit.questions == len(chosen) == 2
    assert audit.covered == audit.questions_with_literals == 2
    assert all("Addresses.country = 'Haiti'" in row["relevant"] for row in audit.rows)
