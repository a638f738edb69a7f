"""Dataset loaders on the shared Spider/BIRD copies, and their errors on malformed input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from askchain.errors import DatasetError
from askchain.eval.datasets import load_bird, load_domain_questions, load_spider


def test_spider_dev_uses_reconstructed_wta_1(real_spider):
    dataset = real_spider
    assert len(dataset.examples) == 1034 and dataset.skipped == {}
    assert dataset.comparator == "spider"
    assert Counter(e.difficulty for e in dataset.examples) == {"easy": 248, "medium": 446, "hard": 174, "extra": 166}
    first = dataset.examples[0]
    assert (first.db_id, first.gold_sql, first.order_matters) == ("concert_singer", "SELECT count(*) FROM singer", False)
    assert any(e.order_matters for e in dataset.examples)


def test_spider_skips_and_counts_missing_databases(spider_root, tmp_path):
    (tmp_path / "database").symlink_to(spider_root / "database")
    entries = [{"db_id": db, "question": "q?", "query": "SELECT 1"} for db in ("singer", "wta_1", "wta_1")]
    (tmp_path / "dev.json").write_text(json.dumps(entries))
    dataset = load_spider(tmp_path)
    assert [e.db_id for e in dataset.examples] == ["singer"]
    assert dataset.skipped == {"wta_1": 2}


@pytest.mark.parametrize("split, usable, skipped", [("dev", 129, 1405), ("minidev", 52, 448)])
def test_bird_keeps_superhero_only(bird_root, split, usable, skipped):
    dataset = load_bird(bird_root, split)
    assert len(dataset.examples) == usable and sum(dataset.skipped.values()) == skipped
    assert {e.db_id for e in dataset.examples} == {"superhero"}
    assert all(e.difficulty in ("simple", "moderate", "challenging") for e in dataset.examples)
    assert sum(bool(e.hint) for e in dataset.examples) > usable // 2  # the evidence travels as the hint


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "must hold a JSON list"),
        ('[{"db_id": "singer", "question": "q"}]', r"question 0 lacks text field\(s\) query"),
        ('[{"db_id": "nowhere", "question": "q", "query": "SELECT 1"}]', "none of the 1 questions"),
    ],
)
def test_malformed_spider_files_raise_dataset_error(tmp_path, content, message):
    (tmp_path / "dev.json").write_text(content)
    with pytest.raises(DatasetError, match=message):
        load_spider(tmp_path)


def test_missing_files_and_unknown_split(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_spider(tmp_path)
    with pytest.raises(DatasetError, match="unknown BIRD split 'test'"):
        load_bird(tmp_path, "test")


def test_eth_questions_file(tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = [
        {"id": "blocks-1", "question": "How many blocks?", "gold_sql": "SELECT COUNT(*) FROM b", "category": "blocks",
         "difficulty": "easy"},
        {"id": "top-2", "question": "Top senders?", "gold_sql": "SELECT 1", "difficulty": "hard", "order_matters": True},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    dataset = load_domain_questions("ethereum", path)
    assert dataset.comparator == "spider2"
    assert [(e.id, e.db_id, e.category, e.order_matters) for e in dataset.examples] == [
        ("blocks-1", "ethereum", "blocks", False), ("top-2", "ethereum", None, True)
    ]
    path.write_text(json.dumps({"id": "x", "question": "q"}))
    with pytest.raises(DatasetError, match="lacks field"):
        load_domain_questions("ethereum", path)


def test_only_the_example_pool_has_its_evaluated_split_held_out(tmp_path):
    """Evaluating the bank's dev rows keeps them out of the examples; another file's dev rows are no examples, so
    evaluating them keeps the pool whole, as evaluating test rows does."""
    path = tmp_path / "multistep_dev.jsonl"
    path.write_text(json.dumps({"id": "m-1", "question": "q", "gold_sql": "SELECT 1", "split": "dev"}) + "\n")
    assert load_domain_questions("ethereum", path, "dev").examples_held_out == ()
    assert load_domain_questions("ethereum", split="dev").examples_held_out == ("dev",)
    assert load_domain_questions("ethereum", split="test").examples_held_out == ()
