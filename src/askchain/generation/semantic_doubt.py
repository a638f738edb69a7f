"""Whether a semantic query measures what its question names: a small model picks a measure from a long catalog by
habit (distinct senders where the question counts transfers, an average value where it counts logs), and the
compiled SQL then runs to plausible rows that no check of the SQL can fault.

A query is doubted when one of its measures shares no word with the question (by its name, label or synonyms) while
another measure of the same model does: the question's own words point elsewhere. A doubted lead does not answer
alone: askchain.pipeline.stages.draft asks free-SQL samples to confirm its result (`doubted_lead_confirmation`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import snowballstemmer

if TYPE_CHECKING:
    from askchain.semantic.governed import SemanticModel
    from askchain.semantic.governed.reading import Field

#: Words that say how a measure aggregates or which unit it is in, not what it measures.
AGGREGATION_WORDS = frozenset({
    "a", "an", "and", "are", "average", "avg", "by", "count", "eth", "gwei", "how", "in", "is", "many", "mean", "much",
    "num", "number", "of", "per", "sum", "the", "to", "total", "with",
})
_STEMMER = snowballstemmer.stemmer("english")


def stem(word: str) -> str:
    """A word without its plural or verb ending (transfers, transferred: transfer; Porter's English stemmer)."""
    return _STEMMER.stemWord(word.lower())


_AGGREGATION_STEMS = frozenset(stem(word) for word in AGGREGATION_WORDS)


def words(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in re.findall(r"[a-z0-9]+", text.lower()))


def naming_words(field: Field) -> frozenset[str]:
    """The words that name a field: of its name, its label and its synonyms, less the aggregation words."""
    phrases = (field.name.replace("_", " "), field.label, *field.synonyms)
    return frozenset(word for phrase in phrases for word in words(phrase)) - _AGGREGATION_STEMS


def unnamed_measure(model: SemanticModel, query: dict, question: str) -> str:
    """Why `query` (a semantic query as a dict) is doubted for `question`, or "" when each of its measures is named
    by the question's words or no other measure of its model is."""
    spec = model.specs.get(query.get("model", ""))
    if spec is None:
        return ""
    asked = words(question)
    chosen = [name for name in query.get("measures") or () if name in spec.measures]
    unnamed = [name for name in chosen if not naming_words(spec.measures[name]) & asked]
    named = [name for name, field in spec.measures.items() if name not in chosen and naming_words(field) & asked]
    if not unnamed or not named:
        return ""
    return (f"no word of the question names the measure {', '.join(unnamed)}; its words name "
            f"{', '.join(named[:3])} of {spec.name}")
