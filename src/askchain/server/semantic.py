"""The governed semantic model for other agents: its catalog (measures, dimensions, windows) and semantic queries run
through the same safe executor, as semantic-layer servers offer them. The HTTP API and the MCP server both use it."""

from __future__ import annotations

from typing import Any

from askchain.db.base import Engine
from askchain.domain import domain_of
from askchain.errors import AskchainError


def semantic_model_of(engine: Engine):
    """The semantic model of the domain the database belongs to; a one-line refusal where it has none."""
    domain = domain_of(engine.schema().name)
    model = domain.semantic_model() if domain else None
    if model is None:
        raise AskchainError(f"database {engine.name} has no semantic model: ask a question or run SQL instead")
    return model


def semantic_catalog(engine: Engine) -> dict[str, Any]:
    """Every model's measures and dimensions (description, unit, synonyms, well-known values) and the windows."""
    return {**semantic_model_of(engine).catalog(), "dialect": "bigquery"}


def run_semantic_query(engine: Engine, query: dict[str, Any]) -> dict[str, Any]:
    """The query compiled by the semantic layer (a rejected one is a one-line refusal with the layer's reason) and
    run read-only: its SQL as the user can run it, what it measures, and its result."""
    compiled = semantic_model_of(engine).compile(query)
    result = engine.execute(compiled.sql)
    return {"sql": engine.qualified_sql(compiled.sql), "reading": compiled.reading, **result.as_dict()}
