"""Few-shot examples chosen by question skeleton (as in DAIL-SQL): similar query shapes, whatever the database.

The pool is Spider train, BIRD train and every installed domain's examples. Each pool question is masked by
`masking.mask_question` with its database's table and column names, embedded with all-MiniLM-L6-v2 and stored in
Qdrant: local mode, a folder per collection under `settings.paths.data("qdrant")`, or a server named by
`settings.pipeline.qdrant_url` (env ASKCHAIN_PIPELINE__QDRANT_URL). The index is synced to the pool on first use in
a process (only new or changed pool entries are embedded), so a growing domain question file costs seconds, not a
rebuild. Examples restricted to one database (the default `examples_scope: schema`) come from a collection of that
database's entries alone, synced in seconds instead of the whole pool's minutes; there `pipeline.examples_key`
finds them by skeleton, by the question as asked, or by both similarities summed.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import re
import threading
import time
import uuid
import warnings
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from askchain.config import Settings, get_settings, shared_data_dir
from askchain.db.schema import Schema
from askchain.domain import all_domains
from askchain.errors import ConfigError, DatasetError, require
from askchain.llm.base import ChatModel
from askchain.prompts import load_prompt
from askchain.retrieval.embedding import MODEL_NAME, DIMENSION, embed
from askchain.retrieval.masking import mask_question, schema_phrases
from askchain.retrieval.progress import progress_bar

#: Bump when the masking rules change: stored skeletons then no longer match and are rebuilt.
RULES_VERSION = "r1"
COLLECTION = "fewshot"
_UPSERT_BATCH = 256


class Example(NamedTuple):
    question: str
    sql: str
    db_id: str
    score: float


@dataclass(frozen=True)
class PoolEntry:
    question: str
    sql: str
    db_id: str
    #: The text embedded to find this entry: its masked skeleton, or its question (`pipeline.examples_key`).
    key: str
    #: The question bank's split the row is in ("" for files without splits): an evaluation leaves its own out.
    split: str = ""

    @cached_property
    def point_id(self) -> str:
        """Content-addressed, so a sync adds exactly the new or changed entries."""
        key = json.dumps([self.db_id, self.question, self.sql, self.key, self.split, MODEL_NAME])
        return str(uuid.UUID(hashlib.sha256(key.encode()).hexdigest()[:32]))


#: A question file's rows marked `"split": "test"` are an evaluation set's held-out questions: never examples. Other
#: splits (`dev`) are examples, except while they are evaluated (`pipeline.examples_held_out`).
HELD_OUT = "test"


@dataclass(frozen=True)
class PoolSource:
    """A file of question/SQL pairs and the file naming its databases' tables and columns."""

    questions: Path
    sql_field: str
    tables: Path | None
    #: The database of every row, for single-database files (JSON lines without a db_id field).
    db_id: str | None = None


def default_sources() -> list[PoolSource]:
    data = shared_data_dir()
    return [
        PoolSource(data / "spider" / "train_spider_min.json", "query", data / "spider" / "tables.json"),
        PoolSource(data / "bird" / "train" / "train_filtered.json", "SQL", data / "bird" / "train" / "train_tables.json"),
        *domain_sources(),
    ]


def domain_sources() -> list[PoolSource]:
    """Each installed domain's example files, its rows under the domain's id (the `Schema.db_id` of its engines)."""
    return [
        PoolSource(path, "gold_sql", domain.schema_file, db_id=domain.name)
        for domain in all_domains() for path in domain.example_files
    ]


def _stamp(path: Path | None) -> tuple:
    if path is None or not path.is_file():
        return ()
    stat = path.stat()
    return (stat.st_mtime_ns, stat.st_size)


def _read_rows(path: Path) -> list[dict]:
    try:
        text = path.read_text()
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read example pool file {path}: {exc}") from exc


@lru_cache(maxsize=8)
def _phrases_by_db(path: Path | None, stamp: tuple) -> dict[str, dict]:
    """db_id -> schema phrases, from a Spider/BIRD tables.json (a list) or a domain's {"tables": {name: {columns}}}."""
    if not stamp:
        return {}
    data = _read_rows(path)
    if isinstance(data, dict):
        data = data.get("tables", data)
        tables = [name.rsplit(".", 1)[-1] for name in data]
        columns = [c["name"] for t in data.values() for c in t.get("columns", [])]
        return {"*": schema_phrases(tables, columns)}
    return {
        db["db_id"]: schema_phrases(
            db["table_names_original"] + db["table_names"],
            [c for _, c in db["column_names_original"] + db["column_names"] if c != "*"],
        )
        for db in data
    }


def make_entries(rows: Iterable[tuple[str, ...]], phrases_by_db: dict[str, dict] | None = None) -> list[PoolEntry]:
    """Pool entries from (question, sql, db_id[, split]) rows; phrases_by_db["*"] applies to every database."""
    phrases_by_db = phrases_by_db or {}
    return [
        PoolEntry(q, sql, db, mask_question(q, phrases_by_db.get(db, phrases_by_db.get("*"))), *split)
        for q, sql, db, *split in rows
    ]


@lru_cache(maxsize=8)
def _load_source(source: PoolSource, stamp: tuple, tables_stamp: tuple, cache_dir: Path) -> tuple[PoolEntry, ...]:
    """A source's entries; masking thousands of questions takes seconds, so skeletons are cached on disk."""
    key = json.dumps([RULES_VERSION, "split", str(source), stamp, tables_stamp])
    cached = cache_dir / f"pool-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    if cached.is_file():
        try:
            return tuple(PoolEntry(*row) for row in json.loads(cached.read_text()))
        except (OSError, ValueError, TypeError):
            pass  # unreadable: rebuild below
    rows = [row for row in _read_rows(source.questions) if row.get("split") != HELD_OUT]
    entries = make_entries(
        ((r["question"], r[source.sql_field], source.db_id or r["db_id"], r.get("split", "")) for r in rows),
        _phrases_by_db(source.tables, tables_stamp),
    )
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_text(json.dumps([[e.question, e.sql, e.db_id, e.key, e.split] for e in entries]))
    tmp.replace(cached)
    return tuple(entries)


def load_pool(sources: Sequence[PoolSource] | None = None, settings: Settings | None = None) -> list[PoolEntry]:
    """Every entry of the sources whose files exist (the domain's file may not be written yet). The index holds them
    all, whatever is evaluated, so processes sharing it never undo each other's sync; the splits under evaluation
    (`pipeline.examples_held_out`) are left out at search time."""
    cache_dir = (settings or get_settings()).paths.cache("examples")
    pool: list[PoolEntry] = []
    for source in default_sources() if sources is None else sources:
        stamp = _stamp(source.questions)
        if stamp:
            pool.extend(_load_source(source, stamp, _stamp(source.tables), cache_dir))
    return pool


# ---- the vector store ----------------------------------------------------------------------------------------------

_REMOTE: dict[str, object] = {}
_SYNCED: set[tuple[str, str, str]] = set()  # (store, collection, pool fingerprint) synced in this process
_LOCK = threading.RLock()  # one store operation at a time: local mode allows one open client per folder
#: How long to wait while another process holds a local store (its first sync of the whole pool takes ~80 s).
LOCAL_WAIT_S = 120.0


@atexit.register
def close_stores() -> None:
    """Close server clients before interpreter teardown (local stores are closed after each operation)."""
    while _REMOTE:
        _REMOTE.popitem()[1].close()


def _store_url(settings: Settings) -> str | None:
    return settings.pipeline.qdrant_url


def _store_location(settings: Settings) -> str:
    return _store_url(settings) or str(settings.paths.data("qdrant"))


@contextmanager
def _open_collection(settings: Settings, name: str):
    """A client for one collection. A server's client is kept for the process. A local collection has a folder of its
    own, opened only for the operation: local mode locks the folder against every other process while it is open,
    and a running `askchain serve` must not shut out `askchain ask`."""
    url = _store_url(settings)
    with _LOCK:
        if url:
            if url not in _REMOTE:
                with warnings.catch_warnings():  # an unreachable server warns here, then fails with the first request
                    warnings.simplefilter("ignore", UserWarning)
                    _REMOTE[url] = require("qdrant_client", "pipeline").QdrantClient(url=url)
            yield _REMOTE[url]
            return
        client = _open_local(Path(_store_location(settings)) / name)
        try:
            yield client
        finally:
            client.close()


def _open_local(path: Path):
    qdrant = require("qdrant_client", "pipeline")
    deadline = time.monotonic() + LOCAL_WAIT_S
    while True:
        try:
            return qdrant.QdrantClient(path=str(path))
        except RuntimeError as exc:  # another process has the folder open
            if time.monotonic() > deadline:
                raise ConfigError(f"the example index at {path} stayed in use by another process for "
                                  f"{LOCAL_WAIT_S:g} s; run a Qdrant server and set ASKCHAIN_PIPELINE__QDRANT_URL to share it") from exc
            time.sleep(0.2)


def _collection_name(collection: str) -> str:
    return f"{collection}_{RULES_VERSION}"


def _stored_ids(client, name: str) -> set[str]:
    ids, offset = set(), None
    while True:
        records, offset = client.scroll(name, limit=4096, offset=offset, with_payload=False, with_vectors=False)
        ids.update(str(r.id) for r in records)
        if offset is None:
            return ids


def _store_errors(fn):
    """A Qdrant server that is down or refuses a request becomes a one-line configuration error."""

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        from qdrant_client.http.exceptions import ApiException

        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(
                f"the Qdrant example store failed ({reason}); check pipeline.qdrant_url, or unset it for local mode"
            ) from exc

    return guarded


#: What finds one database's examples, by `pipeline.examples_key`: the keys whose similarities are summed.
KEYS = {"skeleton": ("skeleton",), "question": ("question",), "both": ("skeleton", "question")}


def scoped(
    pool: Sequence[PoolEntry], collection: str, only_db: str, keys: Sequence[str],
) -> list[tuple[str, list[PoolEntry], str]]:
    """One database's examples, keyed each way `keys` names (their skeletons, or their questions as asked), with the
    collection each lives in: one of their own, seconds to sync where the whole pool takes minutes. Empty when the
    database has no examples.

    Within one schema, masking its names hides what tells its questions apart ("base fee" from "gas price"), and the
    questions as asked find examples that name more of what a question's gold query names. They also find fewer of
    its form (a sum where a share is asked), which the 1.5B model copies; ranked by both similarities summed,
    examples show more of both (docs/benchmarks.md, `askchain eval examples eth --split pool`)."""
    name = f"{collection}-{re.sub(r'[^A-Za-z0-9_-]', '_', only_db)}"
    entries = [e for e in pool if e.db_id == only_db]
    if not entries:
        return []
    return [(key, entries, name) if key == "skeleton" else
            (key, [replace(e, key=e.question) for e in entries], f"{name}-by-question") for key in keys]


class Synced(NamedTuple):
    entries: int  # in the index
    added: int  # embedded by this sync


@_store_errors
def build_example_index(
    settings: Settings | None = None, *, pool: Sequence[PoolEntry] | None = None, collection: str = COLLECTION,
    only_db: str | None = None, show_progress: bool = True,
) -> Synced:
    """Sync the stored index to the pool (`only_db`: that database's collection, as retrieval scoped to it reads):
    embed and add new entries, delete stale ones. A database with no examples of its own has nothing to index."""
    settings = settings or get_settings()
    pool = load_pool(settings=settings) if pool is None else pool
    if only_db:
        searches = scoped(pool, collection, only_db, KEYS[settings.pipeline.examples_key])
        added = sum(_sync_collection(settings, _collection_name(name), entries, show_progress)
                    for _, entries, name in searches)
        return Synced(len(searches[0][1]) if searches else 0, added)
    if not pool:
        raise DatasetError(f"no few-shot examples found (looked for Spider and BIRD train under {shared_data_dir()})")
    return Synced(len(pool), _sync_collection(settings, _collection_name(collection), pool, show_progress))


def _sync_collection(settings: Settings, name: str, pool: Sequence[PoolEntry], show_progress: bool) -> int:
    with _open_collection(settings, name) as client:
        return _sync(client, name, pool, store=_store_location(settings), show_progress=show_progress)


def _sync(client, name: str, pool: Sequence[PoolEntry], *, store: str, show_progress: bool) -> int:
    from qdrant_client import models

    if not client.collection_exists(name):
        client.create_collection(name, vectors_config=models.VectorParams(size=DIMENSION, distance=models.Distance.COSINE))
    wanted = {entry.point_id: entry for entry in pool}
    stored = _stored_ids(client, name)
    stale = list(stored - wanted.keys())
    if stale:
        client.delete(name, points_selector=models.PointIdsList(points=stale))
    new = [entry for pid, entry in wanted.items() if pid not in stored]
    if new:
        with progress_bar(f"embedding {len(new)} examples", len(new)) if show_progress else nullcontext(lambda n=1: None) as advance:
            for start in range(0, len(new), _UPSERT_BATCH):
                batch = new[start : start + _UPSERT_BATCH]
                keys = list(dict.fromkeys(e.key for e in batch))  # paraphrases often share one key
                vectors = dict(zip(keys, embed(keys)))
                client.upsert(name, points=[
                    models.PointStruct(id=e.point_id, vector=vectors[e.key].tolist(), payload={
                        "question": e.question, "sql": e.sql, "db_id": e.db_id, "key": e.key,
                        "question_key": _question_key(e.question), "split": e.split,
                    }) for e in batch
                ])
                advance(len(batch))
    _SYNCED.add((store, name, _fingerprint(wanted)))
    return len(new)


def _fingerprint(ids: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def _question_key(question: str) -> str:
    return " ".join(question.split()).casefold()


# ---- question time -------------------------------------------------------------------------------------------------

def question_skeleton(question: str, model: ChatModel | None = None, schema: Schema | None = None) -> str:
    """The question with values, entities and schema names masked: by the rules, or by `model` when one is given."""
    phrases = schema_phrases([t.name for t in schema.tables], [c.name for t in schema.tables for c in t.columns]) if schema else {}
    if model is None:
        return mask_question(question, phrases)
    names = ""
    if schema:
        columns = sorted({c.name for t in schema.tables for c in t.columns})
        names = f"Tables: {', '.join(t.name for t in schema.tables)}\nColumns: {', '.join(columns)}"
    messages = load_prompt("askchain.retrieval", "skeleton").render(schema_names=names, question=question)
    reply = model.complete(messages, max_tokens=64, stop=["\n"]).text
    skeleton = " ".join(reply.strip().removeprefix("Skeleton:").split()).lower()
    return skeleton or mask_question(question, phrases)


@_store_errors
def retrieve_examples(
    question: str,
    k: int = 4,
    exclude_db: str | None = None,
    exclude_question: str | None = None,
    *,
    only_db: str | None = None,
    schema: Schema | None = None,
    model: ChatModel | None = None,
    settings: Settings | None = None,
    pool: Sequence[PoolEntry] | None = None,
    collection: str = COLLECTION,
) -> list[Example]:
    """The `k` pool examples whose keys are nearest the question's, best first, one per distinct SQL: by skeleton,
    or within `only_db`'s examples by the question as asked or by both similarities summed (`pipeline.examples_key`).

    `exclude_db` drops a whole database's examples and `exclude_question` drops the pool entry with that exact
    question text (case and spacing aside), so an evaluated question never sees itself; the splits under evaluation
    (`pipeline.examples_held_out`) are dropped too. `only_db` keeps one
    database's examples (those written for the question's own schema).
    """
    from qdrant_client import models

    settings = settings or get_settings()
    pool = load_pool(settings=settings) if pool is None else pool
    if only_db:
        keys = KEYS[settings.pipeline.examples_key]
        searches = [] if only_db == exclude_db else scoped(pool, collection, only_db, keys)
        if not searches:
            return []  # nothing can match: no need to load the embedder or open the store
    else:
        searches = [("skeleton", list(pool), collection)]
    must_not = []
    if exclude_db:
        must_not.append(models.FieldCondition(key="db_id", match=models.MatchValue(value=exclude_db)))
    if exclude_question:
        must_not.append(models.FieldCondition(key="question_key", match=models.MatchValue(value=_question_key(exclude_question))))
    if settings.pipeline.examples_held_out:  # no sibling of an evaluated question is ever an example
        must_not.append(models.FieldCondition(key="split", match=models.MatchAny(any=settings.pipeline.examples_held_out)))
    # One search ranks its top few; summed similarities need every entry's from each (one database's: hundreds).
    limit = max(k * 3, k) if len(searches) == 1 else len(searches[0][1])
    scores: dict[tuple[str, str, str], float] = defaultdict(float)
    for key, entries, name in searches:
        vector = embed([question if key == "question" else question_skeleton(question, model, schema)])[0]
        for hit in _search(settings, _collection_name(name), entries, vector, limit, must_not):
            scores[(hit.payload["question"], hit.payload["sql"], hit.payload["db_id"])] += float(hit.score)
    examples, seen = [], set()
    for (text, sql, db_id), score in sorted(scores.items(), key=lambda item: -item[1]):
        sql_key = (db_id, " ".join(sql.split()).lower())
        if sql_key not in seen:
            seen.add(sql_key)
            examples.append(Example(text, sql, db_id, score))
    return examples[:k]


def _search(settings: Settings, name: str, pool: Sequence[PoolEntry], vector, limit: int, must_not: list) -> list:
    """The nearest points of one collection, synced to `pool` first if this process has not yet done so."""
    from qdrant_client import models

    store = _store_location(settings)
    with _open_collection(settings, name) as client:
        if (store, name, _fingerprint(e.point_id for e in pool)) not in _SYNCED:
            _sync(client, name, pool, store=store, show_progress=True)
        return client.query_points(
            name, query=vector.tolist(), limit=limit,
            query_filter=models.Filter(must_not=must_not) if must_not else None,
        ).points
