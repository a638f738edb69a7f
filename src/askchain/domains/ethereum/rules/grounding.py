"""A constant the question never called for is a constant copied from the prompt.

A small model copies what its prompt shows: the Transfer event's hash from the schema notes into "how many events did
USDC emit", the ERC-20 transfer selector from a definition into "how many functions does BAYC expose". The query runs,
returns a plausible number and answers another question; nothing else flags it. A domain names the literals to watch
(`grounded_literals` in its semantic layer: on Ethereum, hex constants of four bytes or more), and each one a query
holds must come from the question itself, from an entity it names (USDC's address) or from a known constant whose
words it uses ("transfers" calls for the Transfer hash). An address padded to a 32-byte word is that address (a word
holding a token id is a number, not watched); a constant the query only keeps out (`from_address != '0x00…0'`) is no filter on it.

The converse holds too: a constant the question writes is what it asks about, and a query that never holds it answers
about something else (`symbol = 'USDC'` for "the contract at 0xa0b8…", where many contracts share a symbol)
(`unused_question_constants`), unless the question gives it as an example ("e.g. 0xa9059cbb").

A known constant the question does not call for is a copy whatever else the query gets right: its condition is dropped
before validation (`drop_unasked_constants`), as the finding would ask, without spending a revision on it."""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Iterator, Sequence

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from askchain.domains.ethereum.rules.word_padding import holds_number, unpadded_address
from askchain.generation.sql_text import apply_edits, condition_span
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Check, Finding, Repair, Repaired, Rule
from askchain.semantic.layer import GroundedLiterals, Reading

#: Words that make the constant after them an example, not a value the question asks about.
EXAMPLE_MARK = re.compile(r"(?:e\.g\.|for example|for instance|such as|like)[\s,:(]*$", re.IGNORECASE)

#: Comparisons that keep a constant out rather than filter on it (`from_address != '0x00…0'`): never a copied filter.
EXCLUSIONS = (exp.NEQ,)

#: What may stand between a literal and the comparison that holds it (`LOWER('0x…')`, `IN ('0x…', …)`).
AROUND_LITERALS = (exp.Lower, exp.Upper, exp.Paren, exp.Tuple)


def ungrounded_literals(sql: str, dialect: str, rules: GroundedLiterals, question: str,
                        readings: Sequence[Reading]) -> list[str]:
    """One finding per distinct constant of the rules' pattern (inside any string literal: `LIKE '0xa9059cbb%'`)
    that neither the question, the entities among its `readings`, nor a known constant its words call for accounts
    for; constants a query only excludes are fine. None when sqlglot cannot read `sql` (the other checks say why)."""
    findings, seen = [], set()
    for _, written, known in _unasked(readable(sql, dialect), rules, question, readings):
        if written.lower() in seen:
            continue
        seen.add(written.lower())
        findings.append(
            f"'{written}' is {known.name}, which the question does not ask about: drop the condition on it"
            if known else
            f"'{written}' is in neither the question nor what it names (a value copied from an example?): "
            "filter only on the values the question gives")
    return findings


def unused_question_constants(sql: str, rules: GroundedLiterals, question: str) -> list[str]:
    """One finding per distinct constant of the rules' pattern that `question` writes (not as an example) and `sql`
    holds nowhere, in any case, padded to a 32-byte word or (one the question writes padded) bare."""
    held = sql.lower()
    unused = {match.group(0).lower(): match.group(0) for match in re.finditer(rules.pattern, question, re.IGNORECASE)
              if not EXAMPLE_MARK.search(question[:match.start()])
              and not any(_written_in(form.removeprefix("0x"), held) for form in _forms(match.group(0).lower()))}
    return [f"the question names '{written}', but the query never uses it: filter on that constant itself, as written "
            "(not on a name or symbol standing for it)" for written in unused.values()]


def drop_unasked_constants(sql: str, dialect: str, rules: GroundedLiterals, question: str,
                           readings: Sequence[Reading]) -> tuple[str, list[str]]:
    """`sql` without each WHERE condition that filters on known constants the question does not call for (the
    Transfer hash copied into "how many events did USDT emit"), with the AND that joined it, and what was dropped. A
    known constant names what it is, so the condition is a copy, never a mistyped value of the question's (an unknown
    constant may be one: that one is left to revision), and neither is one anywhere else than in WHERE's chain of
    ANDs (under OR, in COUNTIF). The rest stays as written; `sql` unchanged (and no notes) when nothing is dropped or
    sqlglot cannot read it."""
    notes: list[str] = []
    while dropped := _drop_one(sql, dialect, rules, question, readings):
        sql, note = dropped
        notes.append(note)
    return sql, notes


def _drop_one(sql: str, dialect: str, rules: GroundedLiterals, question: str,
              readings: Sequence[Reading]) -> tuple[str, str] | None:
    """`sql` with the first droppable condition (see above) taken out where it is written, and the note; None when
    there is none (one edit at a time: two neighbours dropped at once would share their AND)."""
    unasked = list(_unasked(readable(sql, dialect), rules, question, readings))
    copied = {id(literal) for literal, _, known in unasked if known}
    tokens = None  # tokenized only for a query with a condition to drop: most candidates have none
    for literal, _, known in unasked:
        condition = _where_condition(literal) if known else None
        if condition is None or not all(id(other) in copied for other in _watched(condition, rules)):
            continue
        tokens = tokens or Dialect.get_or_raise(dialect).tokenize(sql)
        span = condition_span(tokens, condition, literal.meta.get("start", -1), dialect)
        if span:
            written, notes = apply_edits(sql, [(*span, "", f"dropped {condition.sql(dialect)}: {known.name}, which "
                                                            "the question does not ask about")])
            return written, notes[0]
    return None


def _unasked(tree: exp.Expression | None, rules: GroundedLiterals, question: str, readings: Sequence[Reading]):
    """(literal, constant as written, the known constant it is or None) for each constant of the rules' pattern in a
    string literal of `tree` that nothing the question says or names accounts for, constants only excluded left out."""
    sources = " ".join([question, *(r.definition for r in readings if r.entry.kind == "entity")]).lower()
    for literal in tree.find_all(exp.Literal) if tree is not None else []:
        if not literal.is_string or _excluded(literal):
            continue
        for match in re.finditer(rules.pattern, literal.this, re.IGNORECASE):
            written = match.group(0).lower()
            if holds_number(written):
                continue
            value = unpadded_address(written) or written
            known = rules.known_as(value)
            if not (_written_in(value, sources) or _written_in(written, sources) or
                    (known and known.called_for(question))):
                yield literal, match.group(0), known


def _watched(condition: exp.Expression, rules: GroundedLiterals) -> list[exp.Literal]:
    """The string literals of `condition` holding a constant of the rules' pattern."""
    return [literal for literal in condition.find_all(exp.Literal)
            if literal.is_string and re.search(rules.pattern, literal.this, re.IGNORECASE)]


def _where_condition(literal: exp.Literal) -> exp.Expression | None:
    """The comparison holding `literal` (maybe in parentheses) when it is one of a WHERE clause's ANDed conditions;
    None anywhere else."""
    node = _holder(literal)
    if not isinstance(node, (exp.EQ, exp.In, exp.Like)):
        return None
    while isinstance(node.parent, exp.Paren):
        node = node.parent
    chain = node.parent
    while isinstance(chain, (exp.And, exp.Paren)):
        chain = chain.parent
    return node if isinstance(chain, exp.Where) and isinstance(node.parent, (exp.And, exp.Where)) else None


def _forms(constant: str) -> list[str]:
    """`constant` (lower case) and, for a 32-byte word holding an address, that address: a query may use either."""
    return [constant, *filter(None, [unpadded_address(constant)])]


def _written_in(constant: str, text: str) -> bool:
    """Whether `text` holds `constant` whole, not as the start of a longer hex string."""
    return re.search(re.escape(constant) + r"(?![0-9a-f])", text) is not None


def _holder(literal: exp.Literal) -> exp.Expression | None:
    """The node holding `literal` past the case folds, parentheses and tuples around it: what both a droppable
    condition and a constant only kept out are told by."""
    node = literal.parent
    while isinstance(node, AROUND_LITERALS):
        node = node.parent
    return node


def _excluded(literal: exp.Literal) -> bool:
    """Whether the query only keeps rows away from `literal` (`!=`, `NOT IN`)."""
    parent = _holder(literal)
    if isinstance(parent, exp.In):
        return isinstance(parent.parent, exp.Not)
    return isinstance(parent, EXCLUSIONS)


@dataclass(frozen=True)
class GroundingRule(Rule):
    """A rule over the domain's watched constants, with nothing to do before the question's entities are looked up
    (else every entity's constant would look copied): what the grounding checks and repair share."""

    rules: GroundedLiterals

    def applies(self, analysis: Analysis) -> bool:
        return analysis.readings is not None


@dataclass(frozen=True)
class UngroundedLiterals(GroundingRule, Check):
    """A watched constant the question never called for."""

    id = "ungrounded_literals"
    order = 310
    reads_tree = False

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for message in ungrounded_literals(analysis.sql, analysis.schema.dialect, self.rules, analysis.asked,
                                           analysis.readings):
            yield self.error(message)


@dataclass(frozen=True)
class UnusedQuestionConstants(GroundingRule, Check):
    """A constant the question itself writes that the query never holds (not the hint's: a step's rows list many)."""

    id = "unused_question_constants"
    order = 320
    reads_tree = False

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for message in unused_question_constants(analysis.sql, self.rules, analysis.question):
            yield self.error(message)


@dataclass(frozen=True)
class UnaskedConstants(GroundingRule, Repair):
    """A known constant the question does not call for: its condition dropped, as the finding would ask."""

    id = "unasked_constants"
    order = 90

    def repair(self, analysis: Analysis) -> Repaired:
        return drop_unasked_constants(analysis.sql, analysis.dialect, self.rules, analysis.asked, analysis.readings)
