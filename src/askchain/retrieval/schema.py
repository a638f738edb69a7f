"""Schema linking: the LLM picks the tables and columns a question needs; keys and join paths are added by rule.

The model sees `schema.light()` (pre-filtered by embedding similarity when it exceeds a token budget) and replies with
a small JSON object {table: [columns]}. Names are checked against the schema, so hallucinations are dropped; tables
on the shortest foreign-key path between the chosen ones are added, with the key columns every join needs.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from pydantic import RootModel

from askchain.db.schema import Schema, Table
from askchain.llm.base import ChatModel
from askchain.prompts import load_prompt
from askchain.retrieval.masking import STOPWORDS, name_words

#: (table, column, ref_table, ref_column): one foreign-key pair, as `Schema.foreign_key_edges` gives them.
JoinEdge = tuple[str, str, str, str]
DEFAULT_TOKEN_BUDGET = 1500
_CHARS_PER_TOKEN = 3  # schema text is dense in symbols and short names; a conservative estimate
#: Column types kept with every linked table (DATE, DATETIME, TIME, TIMESTAMP and their variants).
TIME_TYPES = ("DATE", "TIME")
#: A column's relevance mixes its own similarity to the question with its table's.
_TABLE_WEIGHT = 0.3


class Selection(RootModel[dict[str, list[str]]]):
    """The model's reply: table name -> column names."""


@dataclass
class SchemaLink:
    #: Table -> columns in schema order, including the keys the joins need.
    columns: dict[str, list[str]]
    #: Foreign-key pairs joining the selected tables (intermediate tables on the shortest paths included).
    joins: list[JoinEdge] = field(default_factory=list)
    #: True when the model's reply was unusable and the (pre-filtered) schema was kept whole.
    fallback: bool = False

    def subset(self, schema: Schema) -> Schema:
        return schema.subset(self.columns)


def estimate_tokens(text: str) -> int:
    return len(text) // _CHARS_PER_TOKEN + 1


def link_schema(
    question: str, schema: Schema, model: ChatModel, hint: str = "", *, token_budget: int = DEFAULT_TOKEN_BUDGET
) -> SchemaLink:
    """The tables and columns `question` needs, validated against `schema`, with keys and join paths added."""
    text = f"{question}\n{hint}".strip()
    candidates = prefilter_schema(text, schema, token_budget) if estimate_tokens(schema.light()) > token_budget else schema
    messages = load_prompt("askchain.retrieval", "link_schema").render(
        schema=candidates.light(),
        notes=f"\n{schema.notes.strip()}\n" if schema.notes else "",
        question=f"{question}\nHint: {hint}" if hint else question,
    )
    reply = model.complete(messages, temperature=0.0, max_tokens=200, response_model=Selection).parsed[0]
    chosen = validate_selection(reply.root if reply else {}, schema)
    if not chosen:
        return complete_link(candidates, {t.name: [c.name for c in t.columns] for t in candidates.tables}, fallback=True)
    return complete_link(schema, chosen, question=text)


def validate_selection(selection: dict[str, list[str]], schema: Schema) -> dict[str, list[str]]:
    """Keep only names the schema has (case-insensitive, `table.column` accepted); a table with no valid column keeps all."""
    chosen: dict[str, list[str]] = {}
    for table_name, column_names in selection.items():
        table = schema.table(str(table_name))
        if table is None:
            continue
        columns = [table.column(str(name).rsplit(".", 1)[-1]) for name in column_names or []]
        valid = [c.name for c in columns if c is not None]
        kept = chosen.setdefault(table.name, [])
        kept += [c for c in dict.fromkeys(valid or [c.name for c in table.columns]) if c not in kept]
    return chosen


def complete_link(schema: Schema, chosen: dict[str, list[str]], fallback: bool = False, question: str = "") -> SchemaLink:
    """Add bridge tables on the shortest foreign-key paths, then to every kept table the columns a small model's
    selection too often lacks: its keys (primary, and foreign keys, which are often the answer themselves), its date
    and time columns (analytical questions filter and group by time so often that a model shown a table without its
    time column invents one, `block_timestamp` in Ethereum's blocks, and cannot repair it) and the columns named
    like a word of the question (of `gas_limit` and `gas_used` it may keep only the one the question does not mean)."""
    tables = connect_tables(schema, list(chosen))
    joins = [e for e in schema.foreign_key_edges() if e[0] in tables and e[2] in tables and e[0] != e[2]]
    wanted = {name: {c.lower() for c in chosen.get(name, [])} for name in tables}
    for table, column, ref_table, ref_column in joins:
        wanted[table].add(column.lower())
        wanted[ref_table].add(ref_column.lower())
    words = content_words(question)
    columns = {}
    for table in schema.tables:
        if table.name in wanted:
            keys = table.primary_key + [c for fk in table.foreign_keys for c in fk.columns]
            keep = wanted[table.name] | {c.lower() for c in keys} | {
                c.name.lower() for c in table.columns
                if (c.type or "").upper().startswith(TIME_TYPES) or words & set(name_words(c.name))}
            columns[table.name] = [c.name for c in table.columns if c.name.lower() in keep]
    return SchemaLink(columns, joins, fallback)


def content_words(text: str) -> set[str]:
    """The question's words as column names spell them (singular, lower case), without stop words and short words."""
    return {w for token in re.findall(r"\w+", text.lower()) if token not in STOPWORDS for w in name_words(token) if len(w) > 2}


def connect_tables(schema: Schema, tables: list[str]) -> set[str]:
    """The tables plus those on shortest foreign-key paths joining them (nearest first, a greedy Steiner tree).

    A table no path reaches stays in, unconnected: the query may still need it (e.g. a cross join).
    """
    if not tables:
        return set()
    graph: dict[str, set[str]] = {t.name: set() for t in schema.tables}
    for table, _, ref_table, _ in schema.foreign_key_edges():
        if table in graph and ref_table in graph:
            graph[table].add(ref_table)
            graph[ref_table].add(table)
    connected, targets = {tables[0]}, set(tables[1:]) - {tables[0]}
    while targets - connected:
        path = _shortest_path(graph, connected, targets - connected)
        if path is None:
            break
        connected.update(path)
    return connected | targets


def _shortest_path(graph: dict[str, set[str]], sources: set[str], targets: set[str]) -> list[str] | None:
    parent: dict[str, str | None] = {s: None for s in sources}
    queue = deque(sorted(sources))
    while queue:
        node = queue.popleft()
        if node in targets:
            path = []
            while node is not None:
                path.append(node)
                node = parent[node]
            return path
        for neighbour in sorted(graph.get(node, ())):
            if neighbour not in parent:
                parent[neighbour] = node
                queue.append(neighbour)
    return None


# ---- embedding pre-filter for large schemas ------------------------------------------------------------------------

_ITEM_VECTORS: dict[str, tuple[list[tuple[Table, str | None]], np.ndarray]] = {}


def _schema_items(schema: Schema) -> tuple[list[tuple[Table, str | None]], np.ndarray]:
    """(table, column or None) items with their embeddings, cached per schema content."""
    from askchain.retrieval.embedding import embed

    items: list[tuple[Table, str | None]] = []
    texts = []
    for table in schema.tables:
        items.append((table, None))
        texts.append(f"{table.name.replace('_', ' ')}: {table.description or ''}")
        for col in table.columns:
            items.append((table, col.name))
            texts.append(f"{table.name.replace('_', ' ')} {col.name.replace('_', ' ')}: {col.description or ''}")
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    if key not in _ITEM_VECTORS:
        _ITEM_VECTORS[key] = (items, embed(texts))
    return _ITEM_VECTORS[key]


def prefilter_schema(text: str, schema: Schema, token_budget: int) -> Schema:
    """The columns most similar to the question, best first, until their light schema fills the budget."""
    from askchain.retrieval.embedding import embed

    items, vectors = _schema_items(schema)
    similarity = vectors @ embed([text])[0]
    table_score = {id(t): similarity[i] for i, (t, c) in enumerate(items) if c is None}
    ranked = sorted(
        (((1 - _TABLE_WEIGHT) * similarity[i] + _TABLE_WEIGHT * table_score[id(t)], t, c)
         for i, (t, c) in enumerate(items) if c is not None),
        key=lambda item: -item[0],
    )
    chosen: dict[str, list[str]] = {}
    used = 0
    for _, table, column in ranked:
        cost = estimate_tokens(f"{column} {table.column(column).type}, ")
        if table.name not in chosen:
            cost += estimate_tokens(f"{table.display_name}()") + sum(estimate_tokens(c) for c in table.primary_key)
        if used + cost > token_budget:
            break
        used += cost
        chosen.setdefault(table.name, []).append(column)
    return schema.subset(chosen)
