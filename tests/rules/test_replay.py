"""The regression net of issue 45: every SQL the benchmarks stored (`benchmarks/*/*/results.jsonl`: its question, its
database) run through the repairer and the validator as the pipeline runs them, and compared with a committed
snapshot of the repaired SQL and the findings. A change to how candidates are checked or repaired shows up here as
a diff of named rows; a change meant to alter them rewrites the snapshot in a commit of its own.

The default run replays a fixed sample (every case whose key falls in SAMPLE_BUCKETS of 16), a few minutes of work
cut to well under one; ASKCHAIN_REPLAY=full replays every case, and ASKCHAIN_REPLAY=write rewrites the snapshot
(and, with the shared data and the Ethereum domain installed, the schemas it replays over). The schemas are stored
with the snapshot (tests/rules/replay/schemas.json) so the replay needs neither the shared data nor a dataset build.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from askchain.config import get_settings
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.domain import domain_of
from askchain.generation.candidates import Candidate
from askchain.pipeline.run import Run
from askchain.pipeline.stages import repairer, validator

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "replay"
SNAPSHOT = HERE / "snapshot.jsonl"
SCHEMAS = HERE / "schemas.json"
#: Which of 16 buckets of keys the default run replays: a fixed, varied sixteenth-and-more of the cases.
SAMPLE_BUCKETS = {"0", "7", "c"}
MODE = os.environ.get("ASKCHAIN_REPLAY", "sample")


def stored_cases() -> dict[str, dict]:
    """Each distinct (database, question, SQL) the benchmarks stored, by a key of the three, with the first row that
    stored it (results folder and question id) to find it by."""
    cases: dict[str, dict] = {}
    for path in sorted(ROOT.glob("benchmarks/*/*/results.jsonl")):
        source = str(path.parent.relative_to(ROOT / "benchmarks"))
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if not row.get("sql") or not row.get("db_id"):
                continue
            key = hashlib.sha256(json.dumps([row["db_id"], row["question"], row["sql"]]).encode()).hexdigest()[:16]
            cases.setdefault(key, {"db": row["db_id"], "question": row["question"], "sql": row["sql"],
                                   "from": f"{source}:{row.get('id')}"})
    return cases


def schema_from(data: dict) -> Schema:
    tables = [Table(t["name"], [Column(**c) for c in t["columns"]], [ForeignKey(**f) for f in t["foreign_keys"]],
                    t["row_count"], t["description"], t["query_name"]) for t in data["tables"]]
    return Schema(tables, data["dialect"], data["name"], data["notes"])


class StoredEngine(SimpleNamespace):
    """What the repairer and validator read of an engine: its schema and the dialect queries are written in."""

    def schema(self) -> Schema:
        return self.stored


def replay(case: dict, engines: dict[str, StoredEngine]) -> dict:
    """The case as the pipeline repairs and validates it: the default settings, the domain's definitions looked up
    as the `definitions` stage looks them up."""
    engine = engines[case["db"]]
    run = Run(case["question"], engine, None, get_settings())
    domain = domain_of(engine.stored.name)
    layer = domain.semantic_layer() if domain else None
    state = {"question": case["question"], "definitions": layer.match(case["question"]) if layer else []}
    repaired = repairer(run, state)(Candidate(case["sql"], "replay"))
    findings = validator(run, state)(repaired.sql)
    return {"repaired": repaired.sql if repaired.sql != case["sql"] else None, "repairs": list(repaired.repairs),
            "errors": findings.errors, "warnings": findings.warnings}


def load_engines() -> dict[str, StoredEngine]:
    stored = json.loads(SCHEMAS.read_text())
    return {db: StoredEngine(stored=schema_from(data), query_dialect=data["query_dialect"])
            for db, data in stored.items()}


def write_schemas(databases: set[str]) -> None:
    """The schemas of the databases the cases ask over, as the evaluation opens them (needs the shared data)."""
    from askchain.config import shared_data_dir
    from askchain.db import open_database
    from askchain.domain import get_domain

    settings = get_settings()
    spider = shared_data_dir() / "spider"
    out = {}
    for db in sorted(databases):
        if db == "ethereum":
            engine = get_domain("ethereum").schema_database(Path(tempfile.mkdtemp()), settings)
        else:
            folder = next(f for f in (spider / "database", spider / "database_reconstructed") if (f / db).is_dir())
            engine = open_database(str(folder / db / f"{db}.sqlite"))
        schema = engine.schema()
        data = dataclasses.asdict(schema)
        for table in data["tables"]:
            for column in table["columns"]:
                column["examples"] = [v if v is None or isinstance(v, (str, int, float)) else str(v)
                                      for v in column["examples"]]
        out[db] = {**data, "query_dialect": engine.query_dialect}
    SCHEMAS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def snapshot() -> dict[str, dict]:
    return {row.pop("key"): row for row in map(json.loads, SNAPSHOT.read_text().splitlines())}


@pytest.mark.skipif(MODE != "write", reason="ASKCHAIN_REPLAY=write rewrites the snapshot")
def test_write_snapshot():
    cases = stored_cases()
    if not SCHEMAS.exists():
        write_schemas({case["db"] for case in cases.values()})
    engines = load_engines()
    lines = [json.dumps({"key": key, "db": case["db"], "from": case["from"], **replay(case, engines)}, sort_keys=True)
             for key, case in sorted(cases.items())]
    SNAPSHOT.write_text("\n".join(lines) + "\n")


@pytest.mark.skipif(MODE == "write", reason="the snapshot is being written")
def test_repairs_and_findings_match_the_snapshot():
    expected = snapshot()
    cases = {key: case for key, case in stored_cases().items() if key in expected}
    assert len(cases) >= 0.95 * len(expected), "most snapshot cases must still be stored under benchmarks/"
    if MODE != "full":
        cases = {key: case for key, case in cases.items() if key[0] in SAMPLE_BUCKETS}
    engines = load_engines()
    changed = {}
    for key, case in sorted(cases.items()):
        want = {k: v for k, v in expected[key].items() if k not in ("db", "from")}
        got = replay(case, engines)
        if got != want:
            changed[f"{key} ({case['from']})"] = {"snapshot": want, "now": got}
    assert not changed, json.dumps(dict(list(changed.items())[:5]), indent=1) + f"\n{len(changed)} cases changed"


def test_the_snapshot_covers_many_varied_cases():
    """The net is wide: thousands of cases over every benchmarked database, many repaired and many with findings."""
    rows = list(snapshot().values())
    assert len(rows) > 2000
    assert len({row["db"] for row in rows}) >= 20
    assert sum(bool(row["repaired"]) for row in rows) > 50
    assert sum(bool(row["errors"]) for row in rows) > 100
