"""What every stage of one question's run reads: the question, its database, the models by role, the settings
with the method's configuration applied, and where the run's trace goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from askchain.answer.followup import Turn
from askchain.config import Settings
from askchain.db.base import Engine, QueryResult
from askchain.db.dialects import dialect_label
from askchain.db.schema import Schema
from askchain.errors import AskchainError
from askchain.llm.base import ChatModel
from askchain.pipeline.trace import Trace
from askchain.resources import Resources, process_resources


@dataclass(frozen=True)
class Models:
    """The seeds' two roles: `creative` writes candidate SQL (sampled); `factual` links the schema, picks keywords,
    revises, judges, rewrites follow-ups and words the answer (greedy)."""

    creative: ChatModel
    factual: ChatModel

    @classmethod
    def single(cls, model: ChatModel) -> "Models":
        return cls(model, model)

    @property
    def model_id(self) -> str:
        ids = dict.fromkeys([self.creative.model_id, self.factual.model_id])
        return " + ".join(ids)


@dataclass
class Run:
    question: str
    engine: Engine
    models: Models
    #: The settings with the method's configuration applied (`methods:` in settings.yaml).
    settings: Settings
    hint: str = ""  # external knowledge given with the question (BIRD's "evidence")
    #: Earlier turns of a conversation: a follow-up is rewritten into a self-contained question first.
    history: Sequence[Turn] = ()
    #: The question's source database under evaluation, so retrieval can leave out its own examples.
    db_id: str | None = None
    trace: Trace | None = None
    #: What the process loaded once (value indexes...): the process's own unless a test or server brings its own.
    resources: Resources = field(default_factory=process_resources)

    @property
    def schema(self) -> Schema:
        return self.engine.schema()

    @property
    def dialect(self) -> str:
        return self.engine.query_dialect

    @property
    def dialect_label(self) -> str:
        return dialect_label(self.dialect)

    def execute(self, sql: str) -> tuple[QueryResult | None, str | None]:
        return try_execute(self.engine, sql)


def try_execute(engine: Engine, sql: str) -> tuple[QueryResult | None, str | None]:
    """Run SQL through the safe executor; a refusal or failure becomes an error string, never an exception."""
    try:
        return engine.execute(sql), None
    except AskchainError as exc:
        return None, str(exc)
