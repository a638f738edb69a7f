"""An address compared with a 32-byte word is the word that holds it: left-padded with zeros to 64 hex digits.

Event logs keep their indexed parameters as 32-byte words (`logs.topics`), so an address in a topic is
`0x000000000000000000000000` followed by its 40 digits. A model that compares a topic with the bare address writes a
query that runs and matches nothing: no revision is asked for, and the answer is a confident 0. A domain lists its
word columns in its semantic layer (`word_columns`), and each literal of exactly an address's length compared with
one of their elements (`=`, `!=`, `IN`, `IN UNNEST`, either side maybe in LOWER/UPPER) is padded where it is written."""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Iterable

from sqlglot import exp

from askchain.generation.sql_text import apply_edits
from askchain.rules.analysis import Analysis, readable
from askchain.rules.base import Repair, Repaired

ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
WORD_DIGITS = 64
ADDRESS_DIGITS = 40
#: Leading zero digits from which a word holds a number (a token id, an amount below 2**64), not an address.
NUMBER_ZEROS = WORD_DIGITS - 16
#: Case folds a comparison may wrap either side in; padding with zeros keeps it true under either.
CASE_FOLDS = (exp.Lower, exp.Upper)


def pad_addresses_in_words(sql: str, dialect: str, word_columns: Iterable[str]) -> tuple[str, list[str]]:
    """`sql` with each address compared with an element of a word column ("logs.topics"; matched by column name)
    padded to the word, and what was padded ("0xabc… compared with topics[SAFE_OFFSET(1)] padded to 32 bytes");
    `sql` unchanged (and no notes) when there is none or sqlglot cannot read it."""
    names = {column.rsplit(".", 1)[-1].lower() for column in word_columns}
    if not names:
        return sql, []
    tree = readable(sql, dialect)
    if tree is None:
        return sql, []
    edits = []
    for element, literals in _word_comparisons(tree, names):
        for literal in literals:
            span = literal.meta
            if ADDRESS.fullmatch(literal.this) and "start" in span:
                padded = "0x" + literal.this[2:].lower().rjust(WORD_DIGITS, "0")
                edits.append((span["start"], span["end"], exp.Literal.string(padded).sql(dialect),
                              f"{literal.this} compared with {element.sql(dialect)} padded to 32 bytes"))
    return apply_edits(sql, edits)


def unpadded_address(literal: str) -> str | None:
    """The address a 32-byte word holds (`0x` + 24 zeros + 40 digits), the inverse of the padding above; None for
    anything else, and for a word holding a number (a token id) other than zero (the zero address)."""
    digits = literal[2:].lower() if literal[:2].lower() == "0x" else ""
    if len(digits) != WORD_DIGITS or not digits.startswith("0" * (WORD_DIGITS - ADDRESS_DIGITS)) or \
            holds_number(literal):
        return None
    return "0x" + digits[-ADDRESS_DIGITS:]


def holds_number(literal: str) -> bool:
    """Whether a 32-byte word holds a small non-zero number (a token id, an amount below 2**64), not an address."""
    digits = literal[2:].lower()
    return len(digits) == WORD_DIGITS and digits.startswith("0" * NUMBER_ZEROS) and bool(digits.strip("0"))


def _word_comparisons(tree: exp.Expression, names: set[str]) -> list[tuple[exp.Expression, list[exp.Literal]]]:
    """Each element of a word column compared with string literals (`topics[OFFSET(1)] = '0x…'`), and each literal
    looked for among a word column's elements (`'0x…' IN UNNEST(topics)`), with those literals."""
    found = []
    for element in tree.find_all(exp.Bracket):
        if isinstance(element.this, exp.Column) and element.this.name.lower() in names:
            compared = element
            while isinstance(compared.parent, CASE_FOLDS):  # LOWER(topics[OFFSET(1)]) = LOWER('0x…')
                compared = compared.parent
            found.append((element, _compared_literals(compared)))
    for membership in tree.find_all(exp.In):
        unnest, literal = membership.args.get("unnest"), membership.this
        if (unnest and isinstance(literal, exp.Literal) and literal.is_string
                and any(isinstance(c, exp.Column) and c.name.lower() in names for c in unnest.expressions)):
            found.append((unnest, [literal]))
    return found


def _compared_literals(element: exp.Expression) -> list[exp.Literal]:
    """The string literals an array element (or its case fold) is compared with: the other side of `=` / `!=`, or an
    IN list, each looked for inside LOWER/UPPER."""
    parent = element.parent
    if isinstance(parent, (exp.EQ, exp.NEQ)):
        others = [parent.expression if parent.this is element else parent.this]
    elif isinstance(parent, exp.In) and parent.this is element:
        others = parent.expressions
    else:
        return []
    literals = []
    for other in others:
        while isinstance(other, CASE_FOLDS):
            other = other.this
        if isinstance(other, exp.Literal) and other.is_string:
            literals.append(other)
    return literals


@dataclass(frozen=True)
class WordPadding(Repair):
    """An address compared with an element of a 32-byte word column, padded to the word."""

    id = "word_padding"
    order = 70
    #: "table.column" of each array column whose elements are 32-byte words.
    word_columns: tuple[str, ...]

    def repair(self, analysis: Analysis) -> Repaired:
        return pad_addresses_in_words(analysis.sql, analysis.dialect, self.word_columns)
