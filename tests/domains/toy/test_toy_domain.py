"""A domain askchain has never heard of plugs in through its entry point alone: askchain opens its files with its
engine, answers over its default dataset, retrieves its examples, evaluates its questions and runs its CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from askchain.config import get_settings
from askchain.db.connect import open_database, resolve_database
from askchain.db.duckdb import DuckDBEngine
from askchain.domain import domain_names, get_domain
from askchain.errors import AskchainError, ConfigError
from askchain.eval.datasets import load_dataset, reload_dataset
from askchain.retrieval.examples import domain_sources, load_pool

HERE = Path(__file__).parent


def test_the_installed_domain_is_found_beside_ethereum(toy):
    assert {"ethereum", "toy"} <= set(domain_names())
    assert get_domain("toy") is toy and toy.command == "toy"


def test_a_file_with_its_tables_opens_with_its_engine(toy, tmp_path):
    from askchain_toy import RIDES, build

    path = tmp_path / "any name.duckdb"
    build(path)
    engine = open_database(str(path))
    schema = engine.schema()
    assert type(engine).__name__ == "ToyEngine" and schema.db_id == "toy" and schema.notes == toy.notes()
    assert engine.execute("SELECT COUNT(*) FROM rides").rows == [(len(RIDES),)]
    engine.close()

    partial = tmp_path / "stations only.duckdb"
    with duckdb.connect(str(partial)) as con:
        con.execute("CREATE TABLE stations (id INTEGER)")
    assert type(open_database(str(partial))) is DuckDBEngine  # not all of its tables: a plain DuckDB file


def test_no_database_given_opens_the_default_domains_dataset_built_on_first_use(toy):
    settings = get_settings().with_overrides(db={"default_domain": "toy"})
    path = settings.paths.data("toy", "rides.duckdb")
    assert not path.exists()
    engine = resolve_database(None, settings)
    assert type(engine).__name__ == "ToyEngine" and path.is_file()
    assert engine.execute("SELECT name FROM stations WHERE city = 'Porto'").rows == [("Market",)]
    engine.close()
    built = path.stat().st_mtime_ns
    resolve_database(None, settings).close()
    assert path.stat().st_mtime_ns == built  # built once


@pytest.mark.parametrize("default_domain, error, message", [
    (None, AskchainError, "no database given: pass --db"),
    ("nowhere", ConfigError, "no domain 'nowhere' is installed"),
])
def test_no_database_and_no_usable_default_domain_is_a_one_line_error(default_domain, error, message):
    settings = get_settings()
    settings = settings.model_copy(update={"db": settings.db.model_copy(update={"default_domain": default_domain})})
    with pytest.raises(error, match=message):
        resolve_database(None, settings)


def test_its_examples_join_the_pool_under_its_id(toy):
    settings = get_settings()
    pool = [e for e in load_pool(domain_sources(), settings) if e.db_id == "toy"]
    assert [e.question for e in pool] == [
        "How many rides started at the Harbour station?", "What is the average ride length in minutes?",
        "Which city has the most stations?",
    ]
    assert "<table>" in pool[0].key and "rides" not in pool[0].key  # masked with the domain's schema words


def test_its_examples_are_retrieved_for_its_databases(toy):
    pytest.importorskip("qdrant_client")
    pytest.importorskip("sentence_transformers")
    from askchain.retrieval.examples import retrieve_examples

    settings = get_settings()
    engine = toy.default_database(settings)
    found = retrieve_examples(
        "How many rides started at the Castle station?", 2, only_db=engine.schema().db_id, schema=engine.schema(),
        settings=settings, pool=load_pool(domain_sources(), settings),
    )
    engine.close()
    assert [e.db_id for e in found] == ["toy", "toy"]
    assert found[0].question == "How many rides started at the Harbour station?"


def test_the_example_audit_leaves_out_a_questions_own_template_family(toy, tmp_path, monkeypatch):
    pytest.importorskip("qdrant_client")
    pytest.importorskip("sentence_transformers")
    import json

    from askchain.eval.examples import audit_examples, template_families
    from askchain.retrieval import examples

    monkeypatch.setattr(examples, "default_sources", domain_sources)  # Spider's and BIRD's examples are never shown here
    harbour, castle = "How many rides started at the Harbour station?", "How many rides started at the Castle station?"
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({  # a held-out question of the family of one of the domain's examples (Harbour)
        "id": "t1", "split": "test", "family": "rides-from-station", "question": castle,
        "gold_sql": "SELECT COUNT(*) FROM rides JOIN stations ON rides.station_id = stations.id WHERE stations.name = 'Castle'",
    }) + "\n")
    dataset = load_dataset("toy", bank, "test")
    families = template_families(dataset)
    assert families[castle] == families[harbour] == "rides-from-station"  # from the bank and the domain's example file
    settings = get_settings().with_overrides(pipeline={"examples_k": 2})
    seen = audit_examples(dataset, dataset.examples, {}, settings)
    assert seen.rows[0]["examples"][0] == harbour and seen.average("best") == 1.0  # the same query but for its literal
    unseen = audit_examples(dataset, dataset.examples, families, settings)
    assert len(unseen.rows[0]["examples"]) == 2 and harbour not in unseen.rows[0]["examples"]
    assert unseen.average("best") < 1.0


def test_the_example_audit_runs_from_the_cli(toy, monkeypatch):
    pytest.importorskip("qdrant_client")
    pytest.importorskip("sentence_transformers")
    from typer.testing import CliRunner

    from askchain.cli import app
    from askchain.retrieval import examples

    monkeypatch.setattr(examples, "default_sources", domain_sources)  # Spider's and BIRD's examples are never shown here
    done = CliRunner().invoke(app, ["eval", "examples", "toy"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("2 questions, 2 shown examples (up to 3 each) · gold SQL shape overlap: best ")
    assert "rides" in done.output  # toy-1's category


def test_its_evaluation_set_loads_by_its_command_word(toy):
    settings = get_settings()
    dataset = load_dataset("toy")
    assert (dataset.name, dataset.source, dataset.comparator) == ("toy", str(toy.eval_file), "spider2")
    assert [(e.id, e.db_id, e.order_matters, e.hold_out_db) for e in dataset.examples] == [
        ("toy-1", "toy", False, False), ("toy-2", "toy", True, False),
    ]
    engine = dataset.connect("toy", settings)
    assert engine.execute(dataset.examples[0].gold_sql).rows == [(3,)]
    engine.close()
    again = reload_dataset({"dataset": "toy", "source": dataset.source, "split": "default"})
    assert [e.id for e in again.examples] == ["toy-1", "toy-2"]


def test_a_server_lists_its_dataset_under_its_id(toy, tmp_path):
    from askchain.server.catalog import Catalog

    settings = get_settings().with_overrides(db={"default_domain": "toy"})
    catalog = Catalog(settings, {"other": str(tmp_path / "other.duckdb")})
    assert (catalog.names(), catalog.default) == (["toy", "other"], "toy")
    assert type(catalog.engine(None)).__name__ == "ToyEngine"
    catalog.close()
    assert Catalog(settings, {"toy": str(tmp_path / "mine.duckdb")}).names() == ["toy"]  # a configured one wins


def test_its_cli_joins_askchain(toy_site, tmp_path):
    out = tmp_path / "rides.duckdb"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(toy_site), str(HERE)])}
    run = subprocess.run([sys.executable, "-m", "askchain.cli", "toy", "build", "--out", str(out)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "rides 6" in run.stdout and out.is_file()


@pytest.mark.parametrize("entry_point, message", [
    ("bikes = askchain_toy:ToyDomain", "must be a Domain whose name is 'bikes'"),  # one id: the entry point's
    ("broken = askchain_toy:NoSuchDomain", "failed to load"),
])
def test_a_plugin_that_does_not_fit_is_a_config_error(install_plugin, entry_point, message):
    install_plugin(entry_point)
    with pytest.raises(ConfigError, match=message):
        get_domain(entry_point.split(" ")[0])


def test_the_domain_adds_a_rule_of_its_own(toy):
    """A rule declared in the plugin's package runs with the core's, in its order, without any edit of askchain."""
    from askchain.pipeline.validate import validate_for_question
    from askchain.rules.registry import rules_for

    engine = get_domain("toy").default_database(get_settings())
    rules = rules_for(get_domain("toy"))
    assert "toy_ride_hours" in [rule.id for rule in rules]
    findings = validate_for_question("SELECT AVG(minutes / 60) FROM rides", engine.schema(), "How long is a ride?",
                                     rules, None)
    assert [f.rule for f in findings.found] == ["toy_ride_hours"]
    assert validate_for_question("SELECT AVG(minutes) FROM rides", engine.schema(), "How long is a ride?", rules,
                                 None).ok
