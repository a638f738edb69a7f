"""A constant the question never called for is a constant copied from the prompt.

A small model copies what its prompt shows: the Transfer event's hash from the schema notes into "how many events did
USDC emit", the ERC-20 transfer selector from a definition into "how many functions does BAYC expose". The query runs,
returns a plausible number and answers another question; nothing else flags it. A domain names the literals to watch
(`grounded_literals` in its semantic layer: on Ethereum, hex constants of four bytes or more), and each one a query
holds must come from the question itself, from an entity it names (USDC's address) or from a known constant whose
words it uses ("transfers" calls for the Transfer hash). An address padded to a 32-byte word is that address."""

from __future__ import annotations

import re
from typing import Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one
from askchain.pipeline.words import WORD_DIGITS
from askchain.semantic.layer import GroundedLiterals, Reading

ADDRESS_DIGITS = 40


def ungrounded_literals(sql: str, dialect: str, rules: GroundedLiterals, question: str,
                        readings: Sequence[Reading]) -> list[str]:
    """One finding per distinct literal of the rules' pattern that neither the question, the entities among its
    `readings`, nor a known constant its words call for accounts for; none when sqlglot cannot read `sql` (the
    other checks say why)."""
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return []
    pattern = re.compile(rules.pattern, re.IGNORECASE)
    sources = " ".join([question, *(r.definition for r in readings if r.entry.kind == "entity")]).lower()
    findings, seen = [], set()
    for literal in tree.find_all(exp.Literal) if tree is not None else []:
        written = literal.this.lower()
        if not literal.is_string or not pattern.fullmatch(written) or written in seen:
            continue
        seen.add(written)
        value = _unpadded(written)
        if value in sources or written in sources or rules.called_for(value, question):
            continue
        known = rules.name_of(value)
        findings.append(
            f"'{literal.this}' is {known}, which the question does not ask about: drop the condition on it"
            if known else
            f"'{literal.this}' is in neither the question nor what it names (a value copied from an example?): "
            "filter only on the values the question gives")
    return findings


def _unpadded(literal: str) -> str:
    """An address left-padded to a 32-byte word (as logs.topics hold them) as the address; anything else as is."""
    digits = literal[2:]
    if len(digits) == WORD_DIGITS and digits.startswith("0" * (WORD_DIGITS - ADDRESS_DIGITS)):
        return "0x" + digits[-ADDRESS_DIGITS:]
    return literal
