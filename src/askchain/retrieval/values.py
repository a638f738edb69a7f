"""Database values a question refers to (as in CHESS): keywords -> MinHash-LSH over stored text values -> re-rank.

The index holds the distinct values of a database's text columns that are low-cardinality or name-like, never
hashes, addresses or long free text (see `ValuePolicy`). It is built once per database file (keyed by path, mtime and
size), pickled under `settings.paths.cache("values")`, and read through the engine's safe executor, so it works the
same on SQLite, DuckDB and mapped BigQuery names. At question time each keyword's character 3-grams find candidate
values; edit distance (rapidfuzz) and embedding similarity re-rank them into hints like `colour.colour = 'Blue'`.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel
from sqlglot import exp

from askchain.config import Settings
from askchain.db.base import Engine
from askchain.db.dialects import column_type
from askchain.db.schema import Schema, Table
from askchain.errors import AskchainError, require
from askchain.llm.base import ChatModel
from askchain.prompt_data import escape_text, sql_string
from askchain.prompts import load_prompt
from askchain.retrieval.masking import STOPWORDS, literal_spans
from askchain.retrieval.progress import progress_bar

INDEX_VERSION = 1
_EMBEDDING_WEIGHT = 0.3
#: A match scoring below this is not hinted. Measured against the literals of Spider dev's gold SQL
#: (`askchain eval values`, 200 questions): at the former 0.65, 41 % of hints named a value the gold query used; at
#: 0.8, with schema words not looked up and exact matches settling their keyword, 85 %, for 63 of the 65 questions
#: covered before (docs/benchmarks.md).
MIN_SCORE = 0.8


@dataclass(frozen=True)
class ValuePolicy:
    """Which columns are worth indexing, and how the index matches; part of the cache key."""

    #: A text column with more distinct values than this is skipped, unless its name looks like a name.
    max_distinct: int = 5_000
    #: Name-like columns keep at most this many distinct values.
    max_distinct_name_like: int = 50_000
    #: Values inspected to judge a column (type, hash-likeness, length).
    sample_rows: int = 200
    #: Free text (descriptions, comments) is not a lookup target.
    max_avg_length: float = 60.0
    max_value_length: int = 120
    #: A column is skipped when this share of its sampled values looks like a hash, address or encoded blob.
    max_hash_share: float = 0.3
    num_perm: int = 64
    lsh_threshold: float = 0.2


DEFAULT_POLICY = ValuePolicy()
_NAME_LIKE = re.compile(
    r"name|title|label|symbol|city|country|state|region|province|town|place|type|kind|category|genre|status|"
    r"brand|model|make|colou?r|gender|race|language|nationality|department|team|club|company|publisher|school", re.I
)
# Column types whose values are not words a question names: numbers, times, flags, bytes, nested and JSON values.
_NON_TEXT_TYPES = (
    *exp.DataType.NUMERIC_TYPES, *exp.DataType.TEMPORAL_TYPES, *exp.DataType.BINARY_TYPES, *exp.DataType.NESTED_TYPES,
    exp.DataType.Type.BOOLEAN, exp.DataType.Type.INTERVAL, exp.DataType.Type.JSON, exp.DataType.Type.JSONB,
    exp.DataType.Type.UUID,
)
_LETTER = re.compile(r"[^\W\d_]")
_HASH_LIKE = re.compile(r"^(0x[0-9a-f]*|[0-9a-f]{16,}|[a-z0-9+/_=-]{32,})$", re.I)
_IDENTIFIER_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


class Keywords(BaseModel):
    keywords: list[str]


class ValueMatch(NamedTuple):
    table: str
    column: str
    value: str
    keyword: str
    score: float

    def hint(self) -> str:
        """`table.column = 'value'` as the query would write it, on one line whatever the value holds."""
        return f"{escape_text(self.table)}.{escape_text(self.column)} = {sql_string(self.value)}"


@dataclass
class ValueIndex:
    #: (table as queries name it, column) per indexed column.
    columns: list[tuple[str, str]]
    values: list[str]
    #: Index into `columns` for each value.
    column_of: list[int]
    lsh: object
    policy: ValuePolicy


# ---- building ------------------------------------------------------------------------------------------------------

def _select(engine: Engine, table: Table, column: str, *, distinct: bool, limit: int) -> list:
    """Non-null values of one column, written in the engine's query dialect and run by its safe executor."""
    parts = table.display_name.split(".")
    source = exp.table_(parts[-1], db=parts[-2] if len(parts) > 1 else None,
                        catalog=parts[-3] if len(parts) > 2 else None, quoted=True)
    col = exp.column(column, quoted=True)
    query = exp.select(col).from_(source).where(exp.not_(col.is_(exp.null()))).limit(limit)
    if distinct:
        query = query.distinct()
    result = engine.execute(query.sql(dialect=engine.query_dialect), max_rows=limit)
    return [row[0] for row in result.rows]


def column_values(engine: Engine, table: Table, column: str, policy: ValuePolicy = DEFAULT_POLICY) -> list[str]:
    """The column's distinct text values if the policy admits the column, else []."""
    col = table.column(column)
    if col is None or column_type(col.type, engine.query_dialect).is_type(*_NON_TEXT_TYPES):
        return []
    try:
        sample = _select(engine, table, column, distinct=False, limit=policy.sample_rows)
        texts = [v for v in sample if isinstance(v, str)]
        if not texts or len(texts) < len(sample) / 2:
            return []
        if sum(bool(_HASH_LIKE.match(v.strip())) for v in texts) > policy.max_hash_share * len(texts):
            return []
        if sum(len(v) for v in texts) / len(texts) > policy.max_avg_length:
            return []
        if sum(bool(_LETTER.search(v)) for v in texts) < len(texts) / 2:  # numbers or lists stored as text
            return []
        name_like = bool(_NAME_LIKE.search(column))
        cap = policy.max_distinct_name_like if name_like else policy.max_distinct
        values = _select(engine, table, column, distinct=True, limit=cap + 1)
    except AskchainError:  # a refusal or timeout on one column must not stop the index
        return []
    if len(values) > cap and not name_like:
        return []
    return [v for v in values[:cap] if isinstance(v, str) and v.strip() and len(v) <= policy.max_value_length
            and not _HASH_LIKE.match(v.strip())]


def _shingles(text: str) -> set[bytes]:
    padded = f" {' '.join(text.lower().split())} "
    return {padded[i : i + 3].encode() for i in range(len(padded) - 2)}


def build_value_index(engine: Engine, policy: ValuePolicy = DEFAULT_POLICY, *, show_progress: bool = False) -> ValueIndex:
    """Read the admitted columns' values and index their 3-gram MinHashes in an LSH table."""
    datasketch = require("datasketch", "pipeline")
    schema = engine.schema()
    columns, values, column_of = [], [], []
    pairs = [(t, c.name) for t in schema.tables for c in t.columns]
    with progress_bar(f"reading values of {schema.name or engine.name}", len(pairs)) if show_progress else nullcontext(lambda n=1: None) as advance:
        for table, column in pairs:
            found = column_values(engine, table, column, policy)
            if found:
                column_of += [len(columns)] * len(found)
                columns.append((table.display_name, column))
                values += found
            advance(1)
    lsh = datasketch.MinHashLSH(threshold=policy.lsh_threshold, num_perm=policy.num_perm)
    hashes = datasketch.MinHash.bulk([_shingles(v) for v in values], num_perm=policy.num_perm) if values else []
    with lsh.insertion_session() as session:
        for i, minhash in enumerate(hashes):
            session.insert(i, datasketch.LeanMinHash(minhash))
    return ValueIndex(columns, values, column_of, lsh, policy)


def _cache_key(engine: Engine, policy: ValuePolicy) -> str:
    location = Path(engine.location).expanduser()
    stamp: list = [str(location.resolve())] if location.is_file() else [engine.location]
    if location.is_file():
        stat = location.stat()
        stamp += [stat.st_mtime_ns, stat.st_size]
    # the hints name tables as prompts do (short or qualified names)
    payload = json.dumps([INDEX_VERSION, stamp, asdict(policy), engine.table_map, engine.limits.short_table_names],
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def value_index_path(engine: Engine, settings: Settings) -> Path:
    """Where the database's index is cached on disk: keyed by the file's identity and the policy."""
    stem = re.sub(r"\W+", "_", Path(engine.location).stem or "db")
    return settings.paths.cache("values", f"{stem}-{_cache_key(engine, DEFAULT_POLICY)}.pkl")


def load_value_index(engine: Engine, settings: Settings) -> ValueIndex:
    """The database's value index from the disk cache, else built (with progress on stderr) and cached; a process
    keeps the loaded ones in askchain.resources."""
    path = value_index_path(engine, settings)
    index = None
    if path.is_file():
        try:
            with open(path, "rb") as f:
                index = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            index = None  # a stale or truncated cache file is rebuilt
    if index is None:
        index = build_value_index(engine, DEFAULT_POLICY, show_progress=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(index, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    return index


# ---- question time -------------------------------------------------------------------------------------------------

def extract_keywords(question: str, model: ChatModel | None = None, hint: str = "") -> list[str]:
    """Literal spans and content words (and their pairs) of the question; plus the model's keywords when given."""
    text = f"{question}\n{hint}" if hint else question
    keywords = literal_spans(text)
    words = [w for w in re.findall(r"[\w'’.-]+", question) if w.lower() not in STOPWORDS and len(w) > 2]
    keywords += words + [f"{a} {b}" for a, b in zip(words, words[1:])]
    if model is not None:
        messages = load_prompt("askchain.retrieval", "keywords").render(question=text)
        reply = model.complete(messages, temperature=0.0, max_tokens=80, response_model=Keywords).parsed[0]
        keywords = (reply.keywords if reply else []) + keywords
    seen, unique = set(), []
    for keyword in (k.strip() for k in keywords):
        if keyword and keyword.casefold() not in seen:
            seen.add(keyword.casefold())
            unique.append(keyword)
    return unique


def schema_words(schema: Schema) -> frozenset[str]:
    """The words of the schema's table and column names (`LifeExpectancy` -> life, expectancy)."""
    names = [t.name for t in schema.tables] + [c.name for t in schema.tables for c in t.columns]
    return frozenset(w.casefold() for name in names for w in _IDENTIFIER_WORD.findall(name))


def names_schema(keyword: str, words: frozenset[str]) -> bool:
    """A one-word keyword that names a table or column ("players", "date", "languages") asks about the schema, not a
    stored value: looked up, it would hint look-alike values (a player called 'Date', a language 'Mixed Languages')."""
    word = keyword.casefold()
    if " " in word:
        return False
    forms = {word, word.removesuffix("s"), word.removesuffix("es"), word.removesuffix("ies") + "y"}
    return bool(forms & words)


def find_values(
    index: ValueIndex, keywords: list[str], *, names: frozenset[str] = frozenset(), per_keyword: int = 2,
    min_score: float = MIN_SCORE, shortlist: int = 5,
) -> list[ValueMatch]:
    """Stored values each keyword most likely means: LSH candidates, shortlisted by edit similarity, then scored by
    edit similarity blended with embedding similarity (an exact match, case and padding aside, scores 1). Edit similarity
    weighs most; a keyword in `names` (a name of several words the question spells out) scores at least its edit
    similarity, since a misspelt name ("Bruse Wane") embeds far from the stored one."""
    from datasketch import MinHash
    from rapidfuzz import fuzz

    from askchain.retrieval.embedding import embed

    shortlists = []
    for keyword in keywords:
        minhash = MinHash(num_perm=index.policy.num_perm)
        minhash.update_batch(list(_shingles(keyword)))
        candidates = index.lsh.query(minhash)
        ranked = sorted(candidates, key=lambda i: -fuzz.ratio(keyword.casefold(), index.values[i].casefold()))[:shortlist]
        shortlists.append((keyword, ranked))
    texts = sorted({index.values[i] for _, ranked in shortlists for i in ranked} | {k for k, _ in shortlists})
    vectors = dict(zip(texts, embed(texts))) if texts else {}
    matches: dict[tuple[str, str, str], ValueMatch] = {}
    for keyword, ranked in shortlists:
        scored = []
        for i in ranked:
            value = index.values[i]
            if value.strip().casefold() == keyword.casefold():
                score = 1.0
            else:
                edit = fuzz.ratio(keyword.casefold(), value.casefold()) / 100
                blended = (1 - _EMBEDDING_WEIGHT) * edit + _EMBEDDING_WEIGHT * float(vectors[keyword] @ vectors[value])
                score = max(edit, blended) if keyword in names else blended
            table, column = index.columns[index.column_of[i]]
            scored.append(ValueMatch(table, column, value, keyword, round(score, 4)))
        best = sorted(scored, key=lambda m: -m.score)[:per_keyword]
        if best and best[0].score == 1.0:  # an exact match settles the keyword: look-alikes are noise beside it
            best = [m for m in best if m.score == 1.0]
        for match in best:
            key = (match.table, match.column, match.value)
            if match.score >= min_score and (key not in matches or matches[key].score < match.score):
                matches[key] = match
    return sorted(matches.values(), key=lambda m: -m.score)


def retrieve_values(
    question: str, index: ValueIndex, schema: Schema, model: ChatModel | None = None, hint: str = "", *, limit: int = 8,
) -> list[str]:
    """Hints `table.column = 'value'` for the stored values the question most likely refers to, best first."""
    if not index.values:
        return []
    words = schema_words(schema)
    keywords = [k for k in extract_keywords(question, model, hint) if not names_schema(k, words)]
    names = frozenset(span for span in literal_spans(question) if " " in span.strip())
    return [m.hint() for m in find_values(index, keywords, names=names)[:limit]]
