import json

import pytest

pytest.importorskip("qdrant_client")
pytest.importorskip("sentence_transformers")

from askchain.db.schema import Column, Schema, Table  # noqa: E402
from askchain.llm.fake import ScriptedModel  # noqa: E402
from askchain.retrieval.examples import (  # noqa: E402
    PoolSource, build_example_index, load_pool, make_entries, question_skeleton, retrieve_examples,
)

ROWS = [
    ("How many singers are older than 40?", "SELECT count(*) FROM singer WHERE age > 40", "concert"),
    ("List the names of all stadiums ordered by capacity.", "SELECT name FROM stadium ORDER BY capacity", "concert"),
    ("How many heads of the departments are older than 56?", "SELECT count(*) FROM head WHERE age > 56", "dept"),
    ("What is the average budget of departments?", "SELECT avg(budget) FROM department", "dept"),
    ("Which department has the largest budget?", "SELECT name FROM department ORDER BY budget DESC LIMIT 1", "dept"),
    ("What is the eye colour of Bruce Wayne?", "SELECT c.colour FROM superhero s JOIN colour c ON ...", "hero"),
    ("Show the names of heroes published by Marvel Comics.", "SELECT superhero_name FROM superhero ...", "hero"),
    ("How many transactions were in block 17000000?", "SELECT count(*) FROM transactions WHERE block_number = 17000000", "eth"),
]
PHRASES = {
    "concert": {("singer",): "<table>", ("stadium",): "<table>", ("age",): "<column>", ("name",): "<column>", ("capacity",): "<column>"},
    "dept": {("head",): "<table>", ("department",): "<table>", ("age",): "<column>", ("budget",): "<column>", ("name",): "<column>"},
}


@pytest.fixture
def pool():
    return make_entries(ROWS, PHRASES)


def test_paraphrase_finds_its_shape_and_exclusions_apply(settings, pool):
    question = "How many pilots are older than 30?"
    hits = retrieve_examples(question, k=3, settings=settings, pool=pool)
    assert hits[0].sql in {ROWS[0][1], ROWS[2][1]}  # the "how many X older than N" shape, whatever the database
    assert hits[0].score >= hits[-1].score and len(hits) == 3
    assert all(isinstance(h.question, str) and h.db_id for h in hits)

    without_dept = retrieve_examples(question, k=8, exclude_db="dept", settings=settings, pool=pool)
    assert "dept" not in {h.db_id for h in without_dept} and without_dept[0].sql == ROWS[0][1]

    only_concert = retrieve_examples(question, k=8, only_db="concert", settings=settings, pool=pool)
    assert [h.db_id for h in only_concert] == ["concert", "concert"]

    own = "  how many SINGERS are older than 40?"  # the evaluated question itself: case and spacing aside
    assert ROWS[0][0] not in {h.question for h in retrieve_examples(own, k=8, exclude_question=own, settings=settings, pool=pool)}


def test_within_one_database_the_question_as_asked_tells_apart_what_its_skeleton_cannot(settings):
    rows = [
        ("What was the average gas price yesterday?", "SELECT AVG(gas_price) FROM transactions", "eth"),
        ("What was the average base fee yesterday?", "SELECT AVG(base_fee_per_gas) FROM blocks", "eth"),
    ]
    pool = make_entries(rows, {"eth": {("gas", "price"): "<column>", ("base", "fee"): "<column>"}})
    assert pool[0].key == pool[1].key == "what was the average <column> yesterday ?"  # one skeleton for both
    schema = Schema([Table("transactions", [Column("gas_price", "INT")]), Table("blocks", [Column("base_fee", "INT")])], "duckdb")
    best, other = retrieve_examples("Average gas price last week", k=2, only_db="eth", schema=schema, settings=settings, pool=pool)
    assert best.score == other.score  # by skeleton (the default): a tie
    by_question = settings.with_overrides(pipeline={"examples_key": "question"})
    for question, sql in (("Average base fee over the last week", rows[1][1]), ("Average gas price last week", rows[0][1])):
        best, other = retrieve_examples(question, k=2, only_db="eth", schema=schema, settings=by_question, pool=pool)
        assert best.sql == sql and best.score > other.score


def test_both_keys_rank_by_the_sum_of_the_skeleton_and_question_similarities(settings, pool):
    question = "How many department heads are older than 60?"
    by = {key: settings.with_overrides(pipeline={"examples_key": key}) for key in ("skeleton", "question", "both")}
    found = {key: retrieve_examples(question, 3, only_db="dept", settings=s, pool=pool) for key, s in by.items()}
    alone = {key: {e.sql: e.score for e in found[key]} for key in ("skeleton", "question")}
    assert [e.sql for e in found["both"]] == sorted(alone["skeleton"], key=lambda sql: -(alone["skeleton"][sql] + alone["question"][sql]))
    for example in found["both"]:
        assert example.score == pytest.approx(alone["skeleton"][example.sql] + alone["question"][example.sql])


def test_both_keys_sync_both_collections_of_a_database(settings, pool):
    both = settings.with_overrides(pipeline={"examples_key": "both"})
    assert build_example_index(both, pool=pool, only_db="dept", show_progress=False) == (3, 6)
    assert build_example_index(settings, pool=pool, only_db="dept", show_progress=False) == (3, 0)  # the skeletons'


def test_index_sync_embeds_only_new_entries(settings, pool):
    assert build_example_index(settings, pool=pool[:5], show_progress=False) == (5, 5)
    assert build_example_index(settings, pool=pool, show_progress=False) == (len(pool), len(pool) - 5)
    assert build_example_index(settings, pool=pool[2:], show_progress=False) == (len(pool) - 2, 0)  # stale ones deleted
    assert build_example_index(settings, pool=pool, only_db="nowhere", show_progress=False) == (0, 0)
    assert {h.question for h in retrieve_examples("anything", k=8, settings=settings, pool=pool[2:])} == {r[0] for r in ROWS[2:]}


def test_a_database_index_synced_ahead_is_the_one_its_questions_read(settings, pool, monkeypatch):
    from askchain.retrieval import examples

    assert build_example_index(settings, pool=pool, only_db="dept", show_progress=False) == (3, 3)
    examples._SYNCED.clear()  # as in the next process
    added = []
    sync = examples._sync
    monkeypatch.setattr(examples, "_sync", lambda *args, **kwargs: added.append(sync(*args, **kwargs)) or added[-1])
    assert retrieve_examples("What is the average budget?", 1, only_db="dept", settings=settings, pool=pool)
    assert added == [0]  # the same keys, so nothing left to embed


def test_pool_sources_read_json_and_domain_jsonl(tmp_path, settings):
    spider = tmp_path / "train.json"
    spider.write_text(json.dumps([{"question": "How many singers are there?", "query": "SELECT count(*) FROM singer", "db_id": "c"}]))
    spider_tables = tmp_path / "tables.json"
    spider_tables.write_text(json.dumps([{
        "db_id": "c", "table_names_original": ["Singer"], "table_names": ["singer"],
        "column_names_original": [[-1, "*"], [0, "Singer_ID"]], "column_names": [[-1, "*"], [0, "singer id"]],
    }]))
    domain = tmp_path / "questions.jsonl"
    domain.write_text(json.dumps({"id": "q1", "question": "Total value of transactions in 2023?", "gold_sql": "SELECT 1"}) + "\n")
    domain_tables = tmp_path / "combined.json"
    domain_tables.write_text(json.dumps({"tables": {"transactions": {"columns": [{"name": "value"}]}}}))
    sources = [
        PoolSource(spider, "query", spider_tables),
        PoolSource(domain, "gold_sql", domain_tables, db_id="crypto_ethereum"),
        PoolSource(tmp_path / "missing.jsonl", "gold_sql", None, db_id="x"),
    ]
    expected = [("c", "how many <table> are there ?"), ("crypto_ethereum", "total <column> of <table> in <number> ?")]
    assert [(e.db_id, e.key) for e in load_pool(sources, settings)] == expected
    assert len(list((settings.paths.cache_dir / "examples").glob("pool-*.json"))) == 2  # skeletons cached on disk
    spider.write_text(spider.read_text().replace("singers", "songs"))  # a changed file is read again
    assert load_pool(sources, settings)[0].key == "how many songs are there ?"


def test_skeleton_by_rules_uses_the_schema_and_by_llm_uses_the_reply():
    schema = Schema([Table("singer", [Column("age", "INT"), Column("name", "TEXT")])], "sqlite")
    assert question_skeleton("How many singers are older than 40?", schema=schema) == "how many <table> are older than <number> ?"
    model = ScriptedModel(["Skeleton: How many <table> are  older than <number> ?\n"])
    assert question_skeleton("How many singers are older than 40?", model, schema) == "how many <table> are older than <number> ?"
    assert "singer" in model.requests[0].messages[-1][1]  # the schema's names are in the prompt
    assert question_skeleton("How many singers?", ScriptedModel([""]), schema) == "how many <table> ?"  # empty reply: rules


def test_an_unreachable_qdrant_server_is_a_one_line_error(settings, pool):
    from askchain.errors import ConfigError

    down = settings.with_overrides(pipeline={"qdrant_url": "http://127.0.0.1:9"})
    with pytest.raises(ConfigError, match=r"Qdrant example store failed .*qdrant_url") as failure:
        retrieve_examples("How many singers?", 2, settings=down, pool=pool)
    assert "\n" not in str(failure.value)


@pytest.mark.parametrize("only_db, exclude_db", [("nowhere", None), ("concert", "concert")])
def test_a_database_without_examples_of_its_own_skips_the_store(settings, pool, only_db, exclude_db):
    down = settings.with_overrides(pipeline={"qdrant_url": "http://127.0.0.1:9"})  # any store access would fail
    assert retrieve_examples("How many singers?", 2, exclude_db, only_db=only_db, settings=down, pool=pool) == []


HOLD_STORE = """
import sys, time
from qdrant_client import QdrantClient
client = QdrantClient(path=sys.argv[1])
print(client.count(sys.argv[2]).count, flush=True)
time.sleep(float(sys.argv[3]))
client.close()
"""


def hold_store(settings, seconds: float):
    """Another process (a running `askchain serve`, say) with the test collection's local folder open."""
    import subprocess
    import sys

    name = "fewshot_r1"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_STORE, str(settings.paths.data("qdrant") / name), name,
                               str(seconds)], stdout=subprocess.PIPE, text=True)
    assert int(holder.stdout.readline()) == len(ROWS)  # it has the folder now
    return holder


def test_a_local_store_is_shared_with_other_processes(settings, pool, monkeypatch):
    import time

    from askchain.errors import ConfigError
    from askchain.retrieval import examples

    retrieve_examples("How many pilots are older than 30?", 2, settings=settings, pool=pool)
    hold_store(settings, 0).wait(timeout=60)  # released after the operation: another process can open it at once

    holder, started = hold_store(settings, 2), time.monotonic()
    assert len(retrieve_examples("How many pilots?", 2, settings=settings, pool=pool)) == 2  # waits for the holder
    assert time.monotonic() - started > 1 and holder.wait(timeout=60) == 0

    monkeypatch.setattr(examples, "LOCAL_WAIT_S", 0.5)
    holder = hold_store(settings, 30)
    try:
        with pytest.raises(ConfigError, match=r"in use by another process for 0.5 s; run a Qdrant server") as failure:
            retrieve_examples("How many pilots?", 2, settings=settings, pool=pool)
        assert "\n" not in str(failure.value)
    finally:
        holder.kill()
