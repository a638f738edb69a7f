"""A constant the question never called for is a constant copied from the prompt.

A small model copies what its prompt shows: the Transfer event's hash from the schema notes into "how many events did
USDC emit", the ERC-20 transfer selector from a definition into "how many functions does BAYC expose". The query runs,
returns a plausible number and answers another question; nothing else flags it. A domain names the literals to watch
(`grounded_literals` in its semantic layer: on Ethereum, hex constants of four bytes or more), and each one a query
holds must come from the question itself, from an entity it names (USDC's address) or from a known constant whose
words it uses ("transfers" calls for the Transfer hash). An address padded to a 32-byte word is that address (a word
holding a token id is a number, not watched); a constant the query only keeps out (`from_address != '0x00…0'`) is no filter on it."""

from __future__ import annotations

import re
from typing import Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one
from askchain.pipeline.words import holds_number, unpadded_address
from askchain.semantic.layer import GroundedLiterals, Reading

#: Comparisons that keep a constant out rather than filter on it (`from_address != '0x00…0'`): never a copied filter.
EXCLUSIONS = (exp.NEQ,)


def ungrounded_literals(sql: str, dialect: str, rules: GroundedLiterals, question: str,
                        readings: Sequence[Reading]) -> list[str]:
    """One finding per distinct constant of the rules' pattern (inside any string literal: `LIKE '0xa9059cbb%'`)
    that neither the question, the entities among its `readings`, nor a known constant its words call for accounts
    for; constants a query only excludes are fine. None when sqlglot cannot read `sql` (the other checks say why)."""
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return []
    pattern = re.compile(rules.pattern, re.IGNORECASE)
    sources = " ".join([question, *(r.definition for r in readings if r.entry.kind == "entity")]).lower()
    findings, seen = [], set()
    for literal in tree.find_all(exp.Literal) if tree is not None else []:
        if not literal.is_string or _excluded(literal):
            continue
        for match in pattern.finditer(literal.this):
            written = match.group(0).lower()
            if written in seen:
                continue
            seen.add(written)
            if holds_number(written):
                continue
            value = unpadded_address(written) or written
            known = rules.known_as(value)
            if _written_in(value, sources) or _written_in(written, sources) or (known and known.called_for(question)):
                continue
            findings.append(
                f"'{match.group(0)}' is {known.name}, which the question does not ask about: drop the condition on it"
                if known else
                f"'{match.group(0)}' is in neither the question nor what it names (a value copied from an example?): "
                "filter only on the values the question gives")
    return findings


def _written_in(constant: str, text: str) -> bool:
    """Whether `text` holds `constant` whole, not as the start of a longer hex string."""
    return re.search(re.escape(constant) + r"(?![0-9a-f])", text) is not None


def _excluded(literal: exp.Literal) -> bool:
    """Whether the query only keeps rows away from `literal` (`!=`, `NOT IN`)."""
    parent = literal.parent
    while isinstance(parent, (exp.Lower, exp.Upper, exp.Paren, exp.Tuple)):
        parent = parent.parent
    if isinstance(parent, exp.In):
        return isinstance(parent.parent, exp.Not)
    return isinstance(parent, EXCLUSIONS)
