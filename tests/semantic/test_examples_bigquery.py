"""The compiled SQL of every semantic example runs on the BigQuery emulator through askchain's BigQuery engine (its
dry run and byte cap, then the query) over the crypto_ethereum tables as schema.json declares them. The emulator and
its fixture are tests/db/test_bigquery.py's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.db.connect import open_database
from askchain.domain import get_domain

pytestmark = pytest.mark.bigquery

BIGQUERY_TEST = Path(__file__).parents[1] / "db" / "test_bigquery.py"
_spec = importlib.util.spec_from_file_location("bigquery_emulator_test", BIGQUERY_TEST)
_emulator_test = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_emulator_test)
emulator = _emulator_test.emulator  # the fixture, started once for this module

DOMAIN = get_domain("ethereum")
EXAMPLES = [json.loads(line) for line in
            DOMAIN.semantic_model_file.with_name("semantic_examples.jsonl").read_text().splitlines() if line.strip()]


def schema_field(name: str, type_: str):
    """A BigQuery schema field for a GoogleSQL type: arrays are REPEATED, structs RECORDs."""
    from google.cloud import bigquery

    mode = "NULLABLE"
    if type_.startswith("ARRAY<"):
        mode, type_ = "REPEATED", type_[len("ARRAY<"):-1]
    if type_.startswith("STRUCT<"):
        fields = [schema_field(*part.strip().split(" ", 1)) for part in type_[len("STRUCT<"):-1].split(",")]
        return bigquery.SchemaField(name, "RECORD", mode=mode, fields=fields)
    return bigquery.SchemaField(name, type_, mode=mode)


@pytest.fixture(scope="module")
def bigquery_engine(emulator):
    """The eight crypto_ethereum tables, empty, and askchain's engine on the emulator."""
    from google.cloud import bigquery

    client = _emulator_test._client(emulator, "bigquery-public-data")
    client.create_dataset("crypto_ethereum", exists_ok=True)
    for name, spec in json.loads(DOMAIN.schema_file.read_text())["tables"].items():
        schema = [schema_field(column["name"], column["type"]) for column in spec["columns"]]
        client.create_table(bigquery.Table(f"{DOMAIN.bigquery_dataset}.{name}", schema=schema))
    settings = get_settings().with_overrides(db=dict(timeout_s=60, max_rows=1000)).db
    engine = open_database(f"bigquery://{_emulator_test.PROJECT}?endpoint={emulator}", settings)
    yield engine
    engine.close()


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
def test_an_example_runs_on_bigquery(example, semantic_model, bigquery_engine):
    result = bigquery_engine.execute(semantic_model.compile(example["query"]).sql)
    assert result.columns
