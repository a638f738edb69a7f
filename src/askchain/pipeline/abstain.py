"""Abstention: a question the data cannot answer gets "This data has no …", not SQL answering another question.

Three checks, cheapest first, built for a 1.5B model on a CPU:
- before generation, the concepts the question's domain declares absent (`Domain.not_in_data_file`: patterns and the
  answer to give, e.g. USD prices for Ethereum);
- before generation (`pipeline.abstention: llm`), over a database no domain describes, for the concept words of the
  question that no schema name, description, note or value hint spells (askchain.pipeline.coverage), one short
  structured call asks the factual model which column holds each; a word it places in no column that exists is
  absent. Most questions have no such word and pay nothing. A domain's own declarations stand in for this check: its
  questions use many words its schema does not spell ("whales", "collections") that a small model may fail to place;
- after selection, when no candidate ran and the failures asked for columns or tables named after such words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import yaml
from pydantic import RootModel

from askchain.db.schema import Schema
from askchain.domain import domain_of
from askchain.errors import ConfigError
from askchain.generation.context import GenerationContext
from askchain.llm.base import ChatModel
from askchain.pipeline.coverage import Coverage, phrases, words_of
from askchain.pipeline.revise import Execution

#: Words around data in questions that name no data of their own: verbs, adverbs, prepositions and adjectives the
#: coverage finds in no schema. A question missing only these asks for nothing absent.
NOT_CONCEPTS = frozenset(
    "across through into onto about around else once well instead except rather versus someone anyone everyone "
    "somebody anybody something anything everything themselves yes now right just still yet already again whether but "
    "far often earlier later previous next "
    "own use used live speak spoken won win contain belong come got given gone went left built paid spent bought "
    "stand play produce operate depart correspond exist create offer support cover lose lost made hire hold held seen "
    "see move taken take sent send receive happen consider appear visit work run ran begin began start end call called "
    "compare change break skip look answer reach expose implement carry collect "
    "plain empty missing exclude consecutive single common full old new high low long short same whole respective "
    "corresponding available possible known named certain various several active combination pair half peak style "
    "hand range period gap".split()
)
#: Superlatives are orders, not data ("the richest addresses"); these nouns only look like one.
_EST_NOUNS = frozenset("interest request contest harvest forest protest manifest digest".split())
#: The rules whose findings name what a query asked for that does not exist (askchain.rules.checks).
UNKNOWN_NAME_RULES = frozenset({"tables", "columns"})
#: The names a failed query asked for that do not exist, in the words of the engines.
UNKNOWN_NAMES = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"no such (?:column|table): (\S+)",  # SQLite
    r'Referenced column "([^"]+)" not found',  # DuckDB
    r"Table with name (\S+) does not exist",  # DuckDB
    r"Unrecognized name: (\S+)",  # BigQuery
))


@dataclass(frozen=True)
class Abstention:
    """Why a question gets no SQL, and the answer it gets instead."""

    text: str
    #: domain (a declared concept), model (the model placed a word in no column), failure (the queries failed on it)
    reason: str
    #: The declared concept, or the question's words the data lacks.
    concept: str

    def record(self) -> dict[str, str]:
        return {"text": self.text, "reason": self.reason, "concept": self.concept}

    @property
    def from_failures(self) -> bool:
        """Decided because the queries failed, not because the data is known to lack the concept: in a planned
        question, what the earlier steps found still stands."""
        return self.reason == "failure"

    @property
    def why(self) -> str:
        return {
            "domain": f"the domain's data declares {self.concept} absent",
            "model": f"the model found no column for {self.concept}",
            "failure": f"every query failed asking for {self.concept}, which the schema lacks",
        }[self.reason]


@dataclass(frozen=True)
class MissingConcept:
    """A concept a domain's data does not hold, as its not_in_data.yaml declares it."""

    concept: str
    answer: str
    patterns: tuple[re.Pattern, ...]
    unless: tuple[re.Pattern, ...] = ()

    def asked_by(self, question: str) -> bool:
        return any(p.search(question) for p in self.patterns) and not any(p.search(question) for p in self.unless)


@lru_cache(maxsize=8)
def load_concepts(path: Path) -> tuple[MissingConcept, ...]:
    """A domain's declared missing concepts; a malformed file is a one-line configuration error."""
    try:
        entries = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or []
        return tuple(
            MissingConcept(
                str(e["concept"]), " ".join(str(e["answer"]).split()),
                tuple(re.compile(p, re.IGNORECASE) for p in e["patterns"]),
                tuple(re.compile(p, re.IGNORECASE) for p in e.get("unless") or ()),
            )
            for e in entries
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, re.error) as exc:
        raise ConfigError(f"{path} is not a list of missing concepts (concept, answer, patterns): {exc}") from exc


def domain_concepts(schema: Schema) -> tuple[MissingConcept, ...]:
    """The concepts the schema's domain declares absent; none for a database of no domain."""
    domain = domain_of(schema.name)
    path = domain.not_in_data_file if domain else None
    return load_concepts(path) if path else ()


def declared_absent(question: str, concepts: Iterable[MissingConcept]) -> Abstention | None:
    """The first declared concept the question asks for, as an abstention."""
    found = next((c for c in concepts if c.asked_by(question)), None)
    return Abstention(found.answer, "domain", found.concept) if found else None


def concept_words(covered: Coverage) -> list[str]:
    """The missing words that could name data: not verb forms (-ed, -ing), adverbs (-ly), superlatives (-est) or
    words around data."""
    return [w for w in covered.missing_concepts if w not in NOT_CONCEPTS and not (
        len(w) > 4 and (re.search(r"(?<!e)ed$|ing$|ly$", w) or (w.endswith("est") and w not in _EST_NOUNS)))]


def no_data_text(missing: list[str], schema: Schema) -> str:
    where = f"the {schema.db_id} database" if schema.db_id else "this database"
    return f"This data has no {' or '.join(missing)}: no table or column of {where} holds it."


class Placement(RootModel[dict[str, str]]):
    """The model's reply: each word -> the column (table.column) holding it, or "none"."""


def placed(answer: str | None, schema: Schema) -> bool:
    """Whether the model's answer names a column the schema has (`table.column`, or a column of some table)."""
    text = (answer or "").strip().strip("`\"'")
    if not text or text.lower() in ("none", "null", "n/a"):
        return False
    table_name, _, column_name = text.rpartition(".")
    tables = [schema.table(table_name)] if table_name else schema.tables
    return any(t is not None and t.column(column_name) is not None for t in tables)


def unplaced_words(question: str, words: list[str], ctx: GenerationContext, schema: Schema, model: ChatModel,
                   seed: int) -> list[str]:
    """The question's phrases of `words` that the model places in no existing column ([] when its reply is not JSON:
    an unreadable reply is no reason to refuse a question)."""
    asked = phrases(question, words)
    if not asked:
        return []
    reply = model.complete(
        ctx.messages("askchain.pipeline", "place_words", words=", ".join(f'"{p}"' for p in asked)),
        temperature=0.0, max_tokens=16 + 16 * len(asked), response_model=Placement, seed=seed,
    ).parsed[0]
    if reply is None:
        return []
    answers = [(words_of(key) | {key.strip().lower()}, value) for key, value in reply.root.items()]

    def answer(phrase: str) -> str | None:
        """Under the phrase, under a key sharing a word with it ("email" for "email address"), or the only answer to
        the only phrase asked (a small model may key it by the column it thought of)."""
        keyed = next((value for keys, value in answers if phrase in keys or keys & words_of(phrase)), None)
        return answers[0][1] if keyed is None and len(asked) == len(answers) == 1 else keyed

    return [p for p in asked if (found := answer(p)) is not None and not placed(found, schema)]


def after_failure(question: str, covered: Coverage, asked_missing: list[str], schema: Schema) -> Abstention:
    """The abstention of a question whose every query failed asking for `asked_missing` (failed_on_missing)."""
    words = phrases(question, concept_words(covered))
    return Abstention(no_data_text(words or asked_missing, schema), "failure", ", ".join(asked_missing))


def failed_on_missing(executions: list[Execution], covered: Coverage) -> list[str]:
    """The names the failed queries asked for that the schema lacks and the question's concept words name."""
    wanted = set(concept_words(covered))
    names: dict[str, None] = {}
    for ex in executions:
        if ex.status not in ("invalid", "error"):
            continue
        asked = [name for f in ex.findings.found if f.error and f.rule in UNKNOWN_NAME_RULES for name in f.names]
        asked += [match.group(1) for pattern in UNKNOWN_NAMES for match in pattern.finditer(ex.error or "")]
        for written in asked:
            name = written.strip("`\"'").rsplit(".", 1)[-1]
            if words_of(name) & wanted:
                names.setdefault(name, None)
    return list(names)
