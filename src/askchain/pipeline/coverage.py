"""How much of a question the schema speaks about: the question's content terms matched against the words of the
schema's table and column names, their descriptions and example values, the domain's notes and the value hints.

A question whose words the schema does not know ("salary" over a schema without one) is either phrased in other
words or asks for data that is not there: confidence reads the share as a signal, abstention the missing concepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from askchain.db.schema import Schema
from askchain.retrieval.masking import STOPWORDS, literal_spans, name_words

#: Words that shape a query rather than name data: aggregates, comparisons, order, time spans, request verbs and
#: function words STOPWORDS leaves in.
QUERY_WORDS = frozenset(
    "average mean median total sum count number amount maximum minimum max min highest lowest largest smallest "
    "biggest greatest fewest oldest youngest newest latest earliest longest shortest most least greater smaller larger "
    "fewer higher lower bigger older younger above below over under after before during since until within ago "
    "per order ordered sort sorted ascending descending alphabetical alphabetically rank ranked distinct different "
    "unique only also both either neither including include includes without along together respectively "
    "return display get provide give find show list tell know want compute calculate counted minus plus times "
    "day days daily week weeks weekly month months monthly year years yearly hour hours minute minutes today "
    "yesterday recent recently past current currently last next time ever never whole entire overall "
    "percentage percent proportion fraction share ratio rate top bottom first second third "
    "record records row rows entry entries value values information info detail details data dataset database table "
    "id ids kind type types one two three four five ten hundred thousand million billion "
    "do does did done have has had having been being can could would should may might will shall "
    "other others another same such any some none than then here where when while which who whom "
    "whose why how what that this these those them they their its our your we you he she his her it".split()
)
#: Two words with different endings are one when they share a prefix this long that covers this share of the shorter
#: word ("created" / "creation"), and not when the prefix is a common stem of two ideas ("transaction" / "transfer").
_MIN_PREFIX = 5
_MIN_PREFIX_SHARE = 0.7
#: A term this long found at the start or end of a schema word written as one (`Highschooler`) is that word's part.
_MIN_AFFIX = 4
_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True)
class Coverage:
    #: The question's content terms (lower case, singular), in order.
    terms: tuple[str, ...]
    #: The terms no schema word matches.
    missing: tuple[str, ...]
    #: The missing terms the question writes in lower case: concepts ("salary"), not names of things ("Binance").
    missing_concepts: tuple[str, ...]

    @property
    def share(self) -> float | None:
        """The share of content terms the schema matches; None for a question with none (nothing to judge)."""
        return round(1 - len(self.missing) / len(self.terms), 3) if self.terms else None


def _tokens(text: str) -> list[str]:
    """Words of free text without numbers, hashes and addresses (`0x3fc9…` holds no word)."""
    return [t for t in _TOKEN.findall(text) if not any(ch.isdigit() for ch in t)]


def words_of(text: str) -> set[str]:
    """The comparable words of free text or a name: split (snake_case, camelCase), lower case, singular, 3+ letters."""
    return {w for token in _tokens(text) for w in name_words(token) if len(w) >= 3}


def content_terms(question: str) -> list[str]:
    """The question's words that name data: not stopwords, query words or numbers; each once, in order."""
    seen: dict[str, None] = {}
    for token in _tokens(question):
        if token.lower() in STOPWORDS or token.lower() in QUERY_WORDS:  # before "does" becomes "doe"
            continue
        for word in name_words(token):
            if len(word) >= 3 and word not in STOPWORDS and word not in QUERY_WORDS:
                seen.setdefault(word, None)
    return list(seen)


def schema_vocabulary(schema: Schema, extra: Iterable[str] = ()) -> frozenset[str]:
    """Every word the schema uses: names, descriptions, example values, the notes, and `extra` texts (value hints)."""
    texts: list[str] = [schema.notes, *extra]
    for table in schema.tables:
        texts += [table.name, table.description or ""]
        for column in table.columns:
            texts += [column.name, column.description or "", *(v for v in column.examples if isinstance(v, str))]
    return frozenset(w for text in texts for w in words_of(text))


def matches(term: str, vocabulary: frozenset[str]) -> bool:
    """The term is a schema word, shares its stem, or begins or ends one written as a single word (`high` and
    `schooler` in `Highschooler`)."""
    if term in vocabulary:
        return True
    if len(term) < _MIN_AFFIX:
        return False
    return any(_same_stem(term, word) or (len(word) > len(term) and (word.startswith(term) or word.endswith(term)))
               for word in vocabulary)


def _same_stem(a: str, b: str) -> bool:
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= _MIN_PREFIX and common >= _MIN_PREFIX_SHARE * min(len(a), len(b))


def coverage(question: str, schema: Schema, value_hints: Iterable[str] = ()) -> Coverage:
    """The question's content terms and which of them the schema (and the value hints found for it) does not name."""
    vocabulary = schema_vocabulary(schema, value_hints)
    terms = content_terms(question)
    missing = tuple(t for t in terms if not matches(t, vocabulary))
    named = {w for span in literal_spans(question) for w in words_of(span)}
    return Coverage(tuple(terms), missing, tuple(t for t in missing if t not in named))


def phrases(question: str, words: Iterable[str]) -> list[str]:
    """The runs of `words` the question writes side by side, as it writes them ("ticket price", "email address")."""
    wanted = set(words)
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(question):
        forms = [w for w in name_words(token) if len(w) >= 3]
        if forms and all(w in wanted for w in forms) and not any(ch.isdigit() for ch in token):
            runs[-1].append(token.lower())
        elif runs[-1]:
            runs.append([])
    return [" ".join(run) for run in runs if run]
