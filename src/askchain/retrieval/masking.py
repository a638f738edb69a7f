"""Question skeletons by rules: mask literal values, entities and schema names so similar questions look alike.

"How many heads of the departments are older than 56?" -> "how many <table> of the <table> are older than <number> ?"
The same tokenizer also yields the question's literal spans, which value retrieval looks up in the database.
"""

from __future__ import annotations

import re
from typing import Iterable

VALUE, NUMBER, ENTITY, TABLE, COLUMN = "<value>", "<number>", "<entity>", "<table>", "<column>"

_TOKEN = re.compile(
    r"""(?P<quoted>"[^"]+"|(?<!\w)'[^']+'(?!\w)|“[^”]+”|‘[^’]+’)"""
    r"""|(?P<number>[-+]?\d+(?:[.,:/]\d+)*%?(?![A-Za-z]))"""
    r"""|(?P<word>(?:[A-Za-z]\.){2,}|\w+(?:[.\-&]\w+|['’](?!s\b)\w+)*)"""
    r"""|(?P<other>[^\w\s])"""
)
_SENTENCE_END = {".", "?", "!", ":", ";"}
#: Lower-case words allowed inside a capitalised span ("Bank of America", "Leonardo da Vinci").
_CONNECTORS = {"of", "the", "de", "da", "del", "la", "le", "von", "van", "and", "&"}
#: Words that shape the query rather than name data; never masked even when a column is called so.
_STRUCTURE_WORDS = {"number", "count", "total", "sum", "average", "avg", "max", "min", "maximum", "minimum", "each", "all"}
_MAX_NAME_WORDS = 4
#: Words that carry no content of their own: never looked up as values or matched against column names.
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or not no is are was were be been what which who whom whose how "
    "many much list show give find name names tell me all each every than more less most least top first last "
    "there their that this these those it its as do does did have has had please between among whether".split()
)


def name_words(text: str) -> tuple[str, ...]:
    """A name or phrase as comparable words: camelCase and snake_case split, lower case, plural 's' dropped."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[_\W]+", " ", text)
    return tuple(_singular(w) for w in spaced.lower().split())


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def schema_phrases(tables: Iterable[str], columns: Iterable[str]) -> dict[tuple[str, ...], str]:
    """Schema names as word tuples -> the mask that replaces them (a name that is both a table and a column is a table)."""
    phrases: dict[tuple[str, ...], str] = {}
    for label, names in ((COLUMN, columns), (TABLE, tables)):
        for name in names:
            words = name_words(name)
            trivial = len(words) == 1 and (len(words[0]) < 2 or words[0] in _STRUCTURE_WORDS)
            if words and len(words) <= _MAX_NAME_WORDS and not trivial:
                phrases[words] = label
    return phrases


def _tokens(question: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(question)]


def _capitalised(kind: str, text: str) -> bool:
    return kind == "word" and text[:1].isupper()


def _entity_end(tokens: list[tuple[str, str]], start: int) -> int:
    """The index after a capitalised span starting at `start`, allowing connectors between capitalised words."""
    end = start + 1
    while end < len(tokens):
        kind, text = tokens[end]
        if _capitalised(kind, text):
            end += 1
        elif text.lower() in _CONNECTORS and end + 1 < len(tokens) and _capitalised(*tokens[end + 1]):
            end += 2
        else:
            break
    return end


def _spans(question: str, phrases: dict[tuple[str, ...], str]) -> list[tuple[str, str | None]]:
    """(text, mask or None) pieces of the question, by the rules in the module docstring."""
    tokens = _tokens(question)
    pieces: list[tuple[str, str | None]] = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        sentence_start = i == 0 or tokens[i - 1][1] in _SENTENCE_END
        if kind == "quoted":
            pieces.append((text[1:-1], VALUE))
            i += 1
            continue
        if kind == "number":
            pieces.append((text, NUMBER))
            i += 1
            continue
        if _capitalised(kind, text) and not sentence_start:
            end = _entity_end(tokens, i)
            span = " ".join(t for _, t in tokens[i:end])
            pieces.append((span, phrases.get(name_words(span), ENTITY)))
            i = end
            continue
        match = _longest_name(tokens, i, phrases)
        if match:
            end, label = match
            pieces.append((" ".join(t for _, t in tokens[i:end]), label))
            i = end
            continue
        pieces.append((text, None))
        i += 1
    return pieces


def _longest_name(tokens: list[tuple[str, str]], start: int, phrases: dict[tuple[str, ...], str]) -> tuple[int, str] | None:
    words: list[str] = []
    best = None
    for end in range(start, min(len(tokens), start + _MAX_NAME_WORDS)):
        kind, text = tokens[end]
        if kind != "word":
            break
        words.extend(name_words(text))
        label = phrases.get(tuple(words))
        if label:
            best = (end + 1, label)
    return best


def mask_question(question: str, phrases: dict[tuple[str, ...], str] | None = None) -> str:
    """The question's skeleton: lower case, masks for values, numbers, entities and schema names, repeats collapsed."""
    out: list[str] = []
    for text, label in _spans(question, phrases or {}):
        token = label or text.lower()
        if not (label and out and out[-1] == token):
            out.append(token)
    return " ".join(out)


def literal_spans(question: str) -> list[str]:
    """Quoted strings and capitalised entity spans: the literals a question most likely quotes from the data."""
    return [text for text, label in _spans(question, {}) if label in (VALUE, ENTITY)]
