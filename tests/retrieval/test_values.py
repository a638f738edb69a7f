import base64
import json

import duckdb
import pytest

pytest.importorskip("datasketch")
pytest.importorskip("rapidfuzz")

from askchain.config import Settings  # noqa: E402
from askchain.db import open_database  # noqa: E402
from askchain.db.duckdb import DuckDBEngine  # noqa: E402
from askchain.db.schema import Column, Schema, Table  # noqa: E402
from askchain.llm.fake import ScriptedModel  # noqa: E402
from askchain.retrieval import values  # noqa: E402
from askchain.retrieval.values import ValuePolicy, extract_keywords, load_value_index, retrieve_values  # noqa: E402


@pytest.fixture(scope="module")
def hero_settings(tmp_path_factory) -> Settings:
    root = tmp_path_factory.mktemp("values")
    return Settings(paths={"cache_dir": root / "cache", "data_dir": root / "data"})


def hints_for(question, engine, settings, model=None):
    return retrieve_values(question, load_value_index(engine, settings), engine.schema(), model)


@pytest.fixture(scope="module")
def hero_engine(superhero_db):
    return open_database(str(superhero_db))


def test_misspelt_name_finds_the_stored_value(hero_engine, hero_settings):
    hints = hints_for("What is the eye colour of Bruse Wane?", hero_engine, hero_settings)
    assert "superhero.full_name = 'Bruce Wayne'" in hints
    assert "colour.colour = 'Blue'" in hints_for("How many heroes have blue eyes?", hero_engine, hero_settings)


def test_model_keywords_are_looked_up_too(hero_engine, hero_settings):
    model = ScriptedModel([json.dumps({"keywords": ["Bruce Wyane"]})])
    hints = hints_for("what colour are the eyes of bruce wyane", hero_engine, hero_settings, model)
    assert hints[0] == "superhero.full_name = 'Bruce Wayne'"
    assert "bruce wyane" in model.requests[0].messages[-1][1]


def test_keywords_are_literals_then_content_words_and_pairs():
    assert extract_keywords('Which heroes of "Marvel Comics" are bad?') == [
        "Marvel Comics", "heroes", "Marvel", "Comics", "bad", "heroes Marvel", "Comics bad",
    ]


def test_index_is_cached_on_disk_per_database(hero_engine, hero_settings, monkeypatch):
    load_value_index(hero_engine, hero_settings)
    monkeypatch.setattr(values, "build_value_index", lambda *a, **k: pytest.fail("rebuilt despite the cache"))
    index = load_value_index(hero_engine, hero_settings)
    assert ("superhero", "full_name") in index.columns
    assert len(list((hero_settings.paths.cache_dir / "values").glob("superhero-*.pkl"))) == 1


@pytest.fixture
def chain_db(tmp_path):
    """A small chain-like DuckDB: hashes, addresses, encoded blobs and free text next to name-like columns."""
    path = tmp_path / "chain.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE tokens (address VARCHAR, symbol VARCHAR, name VARCHAR, decimals INTEGER, description VARCHAR)")
    con.executemany("INSERT INTO tokens VALUES (?, ?, ?, ?, ?)", [
        (f"0x{i:040x}", sym, name, 18, "A token used for many purposes on the network, described at length here.")
        for i, (sym, name) in enumerate([("USDT", "Tether USD"), ("USDC", "USD Coin"), ("WETH", "Wrapped Ether"),
                                         ("DAI", "Dai Stablecoin"), ("UNI", "Uniswap")])
    ])
    con.execute("CREATE TABLE transactions (hash VARCHAR, input VARCHAR, payload VARCHAR, memo VARCHAR, status VARCHAR, "
                "trace_address VARCHAR, decimals VARCHAR)")
    con.executemany("INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, ?)", [
        (f"0x{i:064x}", "0xa9059cbb" + f"{i:064x}", base64.b64encode(f"payload number {i:06d}".encode()).decode(),
         f"memo {i}", ["success", "failure"][i % 2], f"0,{i % 3}", "18")
        for i in range(200)
    ])
    con.close()
    return path


def test_hashes_addresses_blobs_numbers_free_text_and_high_cardinality_are_not_indexed(chain_db, settings):
    engine = open_database(str(chain_db))
    index = values.build_value_index(engine, ValuePolicy(max_distinct=100))
    assert sorted(index.columns) == [("tokens", "name"), ("tokens", "symbol"), ("transactions", "status")]
    assert not any(v.startswith("0x") for v in index.values)


def test_values_of_mapped_tables_are_named_as_the_schema_shows_them(chain_db, settings):
    engine = DuckDBEngine(str(chain_db), query_dialect="bigquery", table_map={
        "bigquery-public-data.crypto_ethereum.tokens": "tokens",
        "bigquery-public-data.crypto_ethereum.transactions": "transactions",
    })
    hints = hints_for("How many transfers of Tether USD were there?", engine, settings)
    assert hints[0] == "tokens.name = 'Tether USD'"
    qualified = settings.with_overrides(db={"short_table_names": False})
    engine = DuckDBEngine(str(chain_db), qualified.db, query_dialect="bigquery", table_map=engine.table_map)
    hints = hints_for("How many transfers of Tether USD were there?", engine, qualified)
    assert hints[0] == "bigquery-public-data.crypto_ethereum.tokens.name = 'Tether USD'"


def test_words_naming_the_schema_are_not_looked_up():
    words = values.schema_words(Schema([Table("players", [Column("birth_date", "TEXT"), Column("LifeExpectancy", "REAL")])], "sqlite"))
    assert {"players", "birth", "date", "life", "expectancy"} <= words
    assert values.names_schema("date", words) and values.names_schema("Players", words)
    assert not values.names_schema("birth date", words) and not values.names_schema("Haiti", words)


def test_schema_words_and_look_alikes_give_no_hints(hero_engine, hero_settings):
    """"colour" names a table: no 'No Colour' hint; 'Blue' matches exactly, so 'Blue/White' is not hinted beside it."""
    hints = hints_for("Which colour are the eyes of heroes with blue hair?", hero_engine, hero_settings)
    assert "colour.colour = 'Blue'" in hints
    assert not any("No Colour" in h or "Blue/White" in h for h in hints)
