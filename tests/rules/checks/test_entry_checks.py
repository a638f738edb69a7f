"""The entries' checks are built when the rule is made: an entry made in code (Ethereum's tokens carry the token
amount's checks) with a predicate the library lacks, or a pattern that breaks once filled, fails there, naming it."""

from __future__ import annotations

import pytest

from askchain.errors import ConfigError
from askchain.rules.checks.entry_checks import entry_checks
from askchain.semantic import Entry
from askchain.semantic.layer import Check


@pytest.mark.parametrize("check, error", [
    (Check(requires_tree={"limt": "{n}"}, message="m"), "entry top has a bad tree predicate .*unknown predicate"),
    (Check(requires_tree={"limit": {"n": "{n}"}}, message="m"), "entry top has a bad tree predicate"),
    (Check(forbids="0x[0-9a-f]{40}", message="m"), "entry top has a check pattern .* once filled"),
])
def test_a_check_that_cannot_be_built_once_filled_fails_when_the_rule_is_made(check, error):
    entry = Entry(name="top", kind="convention", patterns=(r"top (?P<n>\d+)",), definition="d", checks=(check,))
    with pytest.raises(ConfigError, match=error):
        entry_checks([entry])


def test_checks_that_build_make_the_rule():
    entry = Entry(name="top", kind="convention", definition="d",
                  checks=(Check(requires_tree={"limit": "{n}"}, requires=r"\bLIMIT\s+{n}\b", message="m"),))
    assert entry_checks([entry]).entries == (entry,)
