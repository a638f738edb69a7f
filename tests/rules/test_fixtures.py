"""A fixture per rule (issue 45, item 7): `fixtures/<rule id>.yaml` holds cases the rule must pass (no finding;
for a repair, the query left as it is), cases it must fail (a finding of the rule, whose message holds `finding`)
and, for a repair, cases it must fix (`fix` becomes `to`, with notes holding `note`). One parametrised test runs
every case through the rule as the registry gives it (the core's, Ethereum's, the toy domain's), on an analysis
made as the pipeline makes it; a meta-test holds every registered rule to at least one passing and one failing case.

A case names its dialect and, where the rule reads them, its question (`question`; on the Ethereum schema the
layer's definitions are looked up from it, as the definitions stage does), its schema (`schema`: a database of the
replay net's stored schemas, tests/rules/replay/schemas.json; or `tables`, a small schema written out as
`name: ["column TYPE", ...]`) and the engine's known functions (`known_functions`). A file's `defaults` apply to
each of its cases. Cases come from the example pool, the dev split and Spider's training set, and from invented
SQL; never from test-split questions."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.domain import Domain, domain_of, get_domain
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check, Rule, check_all, repair_all
from askchain.rules.registry import checks, rules_for

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
TOY = HERE.parent / "domains" / "toy"
KINDS = ("pass", "fail", "fix")


@cache
def toy_domain() -> Domain:
    """The toy test domain, as its plugin gives it (its package put on the path, as its own tests do)."""
    if str(TOY) not in sys.path:
        sys.path.insert(0, str(TOY))
    from askchain_toy import ToyDomain

    return ToyDomain()


@cache
def registered() -> dict[str, tuple[Rule, Domain | None]]:
    """Every registered rule by id, with the domain whose rules hold it (None: the core's)."""
    found: dict[str, tuple[Rule, Domain | None]] = {}
    for domain in (None, get_domain("ethereum"), toy_domain()):
        for rule in rules_for(domain):
            found.setdefault(rule.id, (rule, domain))
    return found


@cache
def stored_schemas() -> dict:
    return json.loads((HERE / "replay" / "schemas.json").read_text())


def schema_of(case: dict) -> Schema:
    if "tables" in case:
        tables = [Table(name, [Column(*column.split(" ", 1)) for column in columns])
                  for name, columns in case["tables"].items()]
        return Schema(tables, case["dialect"], case.get("schema", "fixture"))
    data = stored_schemas()[case["schema"]]
    tables = [Table(t["name"], [Column(**c) for c in t["columns"]], [ForeignKey(**f) for f in t["foreign_keys"]],
                    t["row_count"], t["description"], t["query_name"]) for t in data["tables"]]
    return Schema(tables, data["dialect"], data["name"], data["notes"])


def load_cases() -> list[tuple[str, str, dict]]:
    """(rule id, case id, case) of every fixture file, defaults applied."""
    cases = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        assert data["rule"] == path.stem, f"{path.name} holds the cases of rule {data['rule']}"
        for i, case in enumerate(data["cases"]):
            case = {**data.get("defaults", {}), **case}
            kind = next(k for k in KINDS if k in case)
            cases.append((path.stem, f"{path.stem}-{kind}-{i}", case))
    return cases


CASES = load_cases()


def analysis_of(case: dict, domain: Domain | None) -> Analysis:
    """The analysis the pipeline makes of the case's SQL: its question, the definitions it calls for, a validator
    of the rules of the schema's domain for the repairs that must not make new errors."""
    schema = schema_of(case)
    owner = domain_of(schema.name) or domain
    layer = owner.semantic_layer() if owner else None
    question = case.get("question", "")
    known = set(case["known_functions"]) if "known_functions" in case else None
    rules = checks(rules_for(owner))
    base = Analysis("", schema, case["dialect"], question, readings=layer.match(question) if layer else [],
                    known_functions=known)
    base.errors_of = lambda text: check_all(base.of(text), rules).errors
    return base.of(next(case[k] for k in KINDS if k in case))


@pytest.mark.parametrize("rule_id,case", [(rule_id, case) for rule_id, _, case in CASES],
                         ids=[case_id for _, case_id, _ in CASES])
def test_the_rule_passes_fails_and_fixes_its_cases(rule_id, case):
    assert rule_id in registered(), f"no registered rule has the id {rule_id}"
    rule, domain = registered()[rule_id]
    analysis = analysis_of(case, domain)
    if isinstance(rule, Check):
        assert "fix" not in case, "a check fixes nothing"
        found = [f for f in check_all(analysis, [rule]).found if f.rule == rule_id]
        if "pass" in case:
            assert not found, found
        else:
            assert found, f"{rule_id} found nothing"
            assert any(case.get("finding", "") in f.message for f in found), found
            assert all(f.error != case.get("warning", False) for f in found), found
        return
    applied = repair_all(analysis, [rule])
    sql, notes = applied.sql, applied.notes
    assert applied.rules == ([rule_id] if notes else [])
    if "pass" in case:
        assert (sql, notes) == (case["pass"], []), notes
    elif "fail" in case:
        pytest.fail("a repair's failing case is a `fix`, with the SQL it becomes (`to`)")
    else:
        assert sql == case["to"], sql
        assert notes and any(case.get("note", "") in note for note in notes), notes


def test_every_registered_rule_has_a_passing_and_a_failing_case():
    kinds: dict[str, set[str]] = {}
    for rule_id, _, case in CASES:
        kinds.setdefault(rule_id, set()).update({"fail" if k == "fix" else k for k in KINDS if k in case})
    lacking = {rule_id: sorted({"pass", "fail"} - kinds.get(rule_id, set())) for rule_id in registered()}
    assert not {rule_id: lack for rule_id, lack in lacking.items() if lack}, "rules lacking cases"
    assert set(kinds) <= set(registered()), "fixtures of rules no one registers"
    assert {"syntax", "word_padding", "toy_ride_hours"} <= set(registered())  # the core's, Ethereum's, the toy's
