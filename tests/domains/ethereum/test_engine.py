"""The local engine speaks GoogleSQL with BigQuery names and shows BigQuery's schema."""

from __future__ import annotations

import json
from datetime import date

import pytest

from askchain.config import get_settings
from askchain.domains.ethereum import dataset
from askchain.domains.ethereum.engine import EthereumEngine
from askchain.errors import QueryFailed


def test_schema_shows_bigquery_types_descriptions_and_names(eth_engine):
    schema = eth_engine.schema()
    assert [t.name for t in schema.tables][:3] == ["blocks", "transactions", "logs"]
    logs = schema.table("bigquery-public-data.crypto_ethereum.logs")
    assert logs.display_name == "logs"  # prompts show short names; the returned SQL is qualified again
    assert eth_engine.qualified_sql("SELECT COUNT(*) FROM logs") == (
        "SELECT COUNT(*) FROM `bigquery-public-data.crypto_ethereum.logs`")
    assert logs.column("topics").type == "ARRAY<STRING>"
    assert schema.table("transactions").column("value").type == "NUMERIC"
    assert "withdrawals" in schema.ddl() and "ARRAY<STRUCT<index INT64" in schema.ddl()
    assert "0xddf252ad" in schema.notes and schema.dialect == "bigquery"


def test_the_schema_prompt_is_the_same_for_every_days_build(eth_db, build_small):
    """The copy is rebuilt each UTC day; its prompt (and the KV state saved for it) must not change with it."""
    other, _ = build_small(date(2026, 1, 5))
    engines = [EthereumEngine(str(path), get_settings().db) for path in (eth_db[0], other)]
    try:
        today, that_day = (engine.schema().ddl() for engine in engines)
    finally:
        for engine in engines:
            engine.close()
    assert today == that_day
    assert "e.g. 'call', 'staticcall', 'delegatecall'" in today and " rows\n" not in today


def test_the_schema_sample_shows_the_default_datasets_schema_prompt(eth_engine, tmp_path):
    """`askchain prepare` evaluates the prompt of this sample at install, and questions over the real build restore it."""
    from askchain.domain import get_domain
    from askchain.llm.fake import ScriptedModel
    from askchain.pipeline.methods import method_settings
    from askchain.pipeline.run import Models, Run
    from askchain.pipeline.stages import schema_prompt_prefix

    settings = get_settings()
    sample = get_domain("ethereum").schema_database(tmp_path, settings)
    try:
        prefixes = [schema_prompt_prefix(Run("", engine, Models.single(ScriptedModel([])), method_settings(settings, "pipeline")))
                    for engine in (sample, eth_engine)]
    finally:
        sample.close()
    assert prefixes[0] is not None and prefixes[0] == prefixes[1]
    assert "CREATE TABLE" in prefixes[0][1]["content"] and "0xddf252ad" in prefixes[0][1]["content"]


@pytest.mark.parametrize("name", ["`bigquery-public-data.crypto_ethereum.blocks`", "`bigquery-public-data`.crypto_ethereum.blocks",
                                  "crypto_ethereum.blocks"])
def test_qualified_names_map_to_local_tables(sql, name):
    assert sql(f"SELECT COUNT(*) FROM {name}")[0][0] > 0


def test_googlesql_fixes(sql):
    # BigQuery numbers days of the week 1 (Sunday) .. 7; DuckDB 0 .. 6.
    rows = sql("SELECT DATE(timestamp), EXTRACT(DAYOFWEEK FROM timestamp) FROM `bigquery-public-data.crypto_ethereum.blocks` LIMIT 50")
    assert all(dow == (day.isoweekday() % 7) + 1 for day, dow in rows)
    # WEEK counts Sunday-started weeks.
    assert sql("SELECT EXTRACT(WEEK FROM TIMESTAMP '2026-01-04 10:00:00')")[0][0] == 1
    # NUMERIC holds 29 integer digits; a bare DECIMAL in DuckDB would overflow to NULL.
    assert sql("SELECT SAFE_CAST('150188698577042438264952193' AS NUMERIC)")[0][0] is not None
    assert sql("SELECT CURRENT_DATE()")[0][0] == dataset.utc_today()


def test_unknown_table_and_column_fail_cleanly(eth_engine):
    with pytest.raises(QueryFailed):
        eth_engine.execute("SELECT * FROM `bigquery-public-data.crypto_ethereum.nope`")
    with pytest.raises(QueryFailed):
        eth_engine.execute("SELECT no_such_column FROM `bigquery-public-data.crypto_ethereum.blocks`")
    with pytest.raises(QueryFailed, match="cannot translate"):
        eth_engine.execute("SELECT ARRAY_AGG(hash ORDER BY number LIMIT 3) FROM `bigquery-public-data.crypto_ethereum.blocks`")


def test_default_engine_uses_a_current_build_and_rebuilds_a_stale_one(eth_db, monkeypatch):
    settings = get_settings()
    path = dataset.dataset_path(settings)
    path.write_bytes(eth_db[0].read_bytes())
    meta = path.with_suffix(".json")
    calls = []
    monkeypatch.setattr(dataset, "build_dataset", lambda p, **kw: calls.append(kw))
    meta.write_text(json.dumps({"end": dataset.utc_today().isoformat()}))
    engine = dataset.default_engine(settings)
    assert isinstance(engine, EthereumEngine) and engine.query_dialect == "bigquery" and calls == []
    engine.close()
    meta.write_text(json.dumps({"end": date(2020, 1, 1).isoformat()}))
    dataset.default_engine(settings).close()
    assert calls and calls[0]["end"] == dataset.utc_today()
    dataset.forget_build(path)  # loaded data is never rebuilt
    calls.clear()
    dataset.default_engine(settings).close()
    assert calls == []


def test_resolve_database_without_db_uses_the_local_dataset(eth_db):
    from askchain.db.connect import resolve_database

    settings = get_settings()
    path = dataset.dataset_path(settings)
    path.write_bytes(eth_db[0].read_bytes())
    path.with_suffix(".json").write_text(json.dumps({"end": dataset.utc_today().isoformat()}))
    engine = resolve_database(None, settings)
    assert engine.execute("SELECT COUNT(*) FROM `bigquery-public-data.crypto_ethereum.transactions`").rows[0][0] > 0
    engine.close()


def test_a_file_with_the_ethereum_tables_opens_as_the_ethereum_engine(eth_db):
    from askchain.db import open_database

    engine = open_database(str(eth_db[0]))
    assert type(engine) is EthereumEngine and engine.query_dialect == "bigquery"
    assert engine.schema().db_id == "ethereum" and "0xddf252ad" in engine.schema().notes  # the domain's id and notes
    rows = engine.execute("SELECT COUNT(*) FROM `bigquery-public-data.crypto_ethereum.blocks`").rows
    assert rows[0][0] == eth_db[1]["blocks"]
    engine.close()


def test_the_domains_examples_are_filed_under_its_engines_schema_id(eth_engine):
    """Retrieval keeps the examples of the question's own database (`only_db=schema.db_id`): the ids must agree."""
    from askchain.retrieval.examples import domain_sources

    sources = [s for s in domain_sources() if s.db_id == eth_engine.schema().db_id]
    assert sources and all(s.questions.is_file() for s in sources)
