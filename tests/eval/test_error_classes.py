"""Error classes read rule ids where validation's findings are the error, and keep every stored benchmark result's
`error_class`: the engine's messages classed by pattern as before, and each stored error validation still finds
(the stored SQL validated again over the replay net's stored schemas) classed the same from its findings' ids."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.domain import domain_of
from askchain.eval.results import classify_error
from askchain.pipeline.run import Run
from askchain.pipeline.stages import validator

ROOT = Path(__file__).resolve().parents[2]


def replay_module():
    spec = importlib.util.spec_from_file_location("replay", ROOT / "tests" / "rules" / "test_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored_errors() -> list[dict]:
    rows = [json.loads(line) for path in sorted(ROOT.glob("benchmarks/*/*/results.jsonl"))
            for line in path.read_text().splitlines()]
    return [row for row in rows if row.get("error") and row.get("error_class")]


def test_stored_error_classes_are_kept_from_messages_and_from_rule_ids():
    rows = stored_errors()
    assert len(rows) > 500
    for row in rows:
        assert classify_error(row["error"], False, 0, 0) == row["error_class"], row["error"]
    engines = replay_module().load_engines()
    settings, seen, by_findings = get_settings(), set(), 0
    for row in rows:
        key = (row["db_id"], row["question"], row["sql"])
        if not row.get("sql") or row["db_id"] not in engines or key in seen:
            continue
        seen.add(key)
        engine = engines[row["db_id"]]
        domain = domain_of(engine.stored.name)
        layer = domain.semantic_layer() if domain else None
        state = {"question": row["question"], "definitions": layer.match(row["question"]) if layer else []}
        findings = validator(Run(row["question"], engine, None, settings), state)(row["sql"])
        if findings.ok or findings.summary() != row["error"]:
            continue  # the engine's error, or validation has changed since
        found = [{"rule": f.rule, "kind": f.kind, "message": f.message} for f in findings.found if f.error]
        assert classify_error(row["error"], False, 0, 0, found) == row["error_class"], found
        by_findings += 1
    assert by_findings > 50


@pytest.mark.parametrize("findings, expected", [
    ([{"rule": "columns", "kind": "unknown", "message": "Column 'nam' does not exist in singer"}],
     "no-such-table-or-column"),
    ([{"rule": "columns", "kind": "ambiguous", "message": "Column 'x' is ambiguous"}], "runtime"),
    ([{"rule": "tables", "kind": "", "message": "reworded: no table like that"}], "no-such-table-or-column"),
    ([{"rule": "entry_checks", "kind": "", "message": "a column that does not exist"}], "runtime"),
    ([{"rule": "entry_checks", "kind": "", "message": ""}, {"rule": "syntax", "kind": "", "message": ""}], "syntax"),
    ([{"rule": "", "kind": "", "message": "validation failed: timed out"}], "timeout"),  # a problem of no rule
])
def test_a_findings_class_is_its_rules_not_its_wording(findings, expected):
    assert classify_error("; ".join(f["message"] for f in findings), False, 0, 0, findings) == expected
