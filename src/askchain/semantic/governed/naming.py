"""How a question names a field of the governed model, word for word: what the semantic generator's fits read to keep
a flag or a split the question asks for (askchain.generation.semantic_doubt), and what a free-SQL repair reads to
keep a flag's condition (askchain.rules.repairs.unasked_flags). A flag column is one a true/false dimension or a
counted condition of the model reads (`receipt_status`, `is_erc20`, `trace_address`): a condition on it narrows the
rows to a kind the question has to name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, NamedTuple

import snowballstemmer

if TYPE_CHECKING:
    from askchain.semantic.governed.model import SemanticModel
    from askchain.semantic.governed.reading import Field, ModelSpec

_STEMMER = snowballstemmer.stemmer("english")
#: An acronym's plural (NFTs), which the stemmer keeps.
ACRONYM_PLURAL = re.compile(r"\b([A-Z0-9]{2,})s\b")
#: A column an expression as the model's YAML writes it reads (`_.trace_address.notnull()` reads `_.trace_address`).
_COLUMN = re.compile(r"(?<![\w.])_\.(\w+)")
#: A column tested for NULL (`_.to_address.isnull()`).
_NULL_TEST = re.compile(r"(?<![\w.])_\.(\w+)\.(?:isnull|notnull)\(\)")
#: A counted condition as the model's YAML writes it (`_.count(where=_.receipt_status == 0)`).
_COUNTED_CONDITION = re.compile(r"count\(where=(?P<condition>(?:[^()]|\([^()]*\))*)\)")


def stem(word: str) -> str:
    """A word without its plural or verb ending (transfers, transferred: transfer; Porter's English stemmer)."""
    return _STEMMER.stemWord(word.lower())


def phrase_words(text: str) -> tuple[str, ...]:
    """The stemmed words of `text`, a hyphen joining its words ("ERC-20" is "erc20", "non-fungible" one word), an
    acronym's plural its singular (NFTs: NFT)."""
    text = ACRONYM_PLURAL.sub(r"\1", text)
    return tuple(stem(word) for word in re.findall(r"[a-z0-9]+", text.lower().replace("-", "")))


def field_phrases(field: Field) -> tuple[str, ...]:
    """The phrases that name a field: its synonyms, its label, its name (without `is_`) and the values its expression
    compares with (the zero address of a mint)."""
    return (*field.synonyms, field.label, re.sub(r"^(?:\w+_)?is_", "", field.name).replace("_", " "),
            *re.findall(r"'([^']+)'", field.expr))


def names_phrase(phrases: tuple[str, ...], asked: tuple[str, ...]) -> bool:
    """Whether the question's words `asked` (`phrase_words`) hold one of `phrases` word for word; a phrase's hyphen may
    be written as a space or not at all ("top-level", "top level", "toplevel"), and its words joined by hyphens
    ("contract-creation" names "contract creation")."""
    return bool(phrase_spans(phrases, asked))


def phrase_spans(phrases: tuple[str, ...], asked: tuple[str, ...]) -> set[range]:
    """Where the question's words `asked` hold one of `phrases` word for word (as `names_phrase` reads them): the
    positions of the words of each match."""
    variants = {phrase_words(p) for phrase in phrases
                for p in (phrase, phrase.replace("-", " "), phrase.replace(" ", "-"))} - {()}
    return {range(i, i + len(v)) for v in variants for i in range(len(asked) - len(v) + 1) if asked[i:i + len(v)] == v}


def columns_read(expression: str) -> list[str]:
    """The columns an expression as the model's YAML writes it reads, by the names its model's table gives them
    (`_.trace_address.notnull()` reads `trace_address`): a measure reading one of them reads the dimension."""
    return _COLUMN.findall(expression)


def counted_conditions(expression: str) -> str:
    """The conditions a measure's expression as the YAML writes it counts rows by, joined by `&`
    (`_.count(where=_.receipt_status == 0) / _.count()`: `_.receipt_status == 0`); "" where it counts none."""
    return " & ".join(match["condition"] for match in _COUNTED_CONDITION.finditer(expression))


class Flag(NamedTuple):
    """A flag column: the phrases that name it, and how the model tests it: for NULL (a contract creation has no
    recipient), for a value or a truth (a receipt status, `is_erc20`), or both."""

    phrases: tuple[str, ...]
    null_test: bool
    value_test: bool


def flag_columns(model: SemanticModel) -> dict[str, Flag]:
    """Each flag column of the dataset ("transactions.receipt_status", "contracts.is_erc721"): one a true/false
    dimension or a measure's counted condition reads; with the phrases of every field that names it: those, and the
    numbered dimensions that read it ("status": failed, successful)."""
    fields = [named for spec in model.specs.values() for named in _naming_fields(spec)]
    tests: dict[str, set[bool]] = {}
    for _, columns, makes_flags in fields:
        for column, null_tested in columns.items() if makes_flags else ():
            tests.setdefault(column, set()).add(null_tested)
    return {flag: Flag(tuple(dict.fromkeys(phrase for field, columns, _ in fields if flag in columns
                                           for phrase in field_phrases(field))), True in tested, False in tested)
            for flag, tested in sorted(tests.items())}


def _naming_fields(spec: ModelSpec) -> Iterator[tuple[Field, dict[str, bool], bool]]:
    """Each field of a model that may name a flag, with the dataset columns (`table.column`) it reads as one (each
    with whether it tests it for NULL) and whether it makes them flags (a true/false dimension, a counted condition)
    or only names them (a numbered dimension)."""
    def sources(expression: str) -> dict[str, bool]:
        null_tested = set(_NULL_TEST.findall(expression))
        return {spec.sources[c]: c in null_tested for c in columns_read(expression) if c in spec.sources}

    for field in spec.dimensions.values():
        if field.unit in ("boolean", "number"):
            yield field, sources(field.expr), field.unit == "boolean"
    for field in spec.measures.values():
        yield field, sources(counted_conditions(field.expr)), True
