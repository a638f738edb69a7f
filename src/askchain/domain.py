"""Domains as plugins: a kind of data askchain knows well (its engine, notes, examples, evaluation set, dataset).

A domain is a `Domain` subclass registered under the `askchain.domains` entry point group, named by its id:

    [project.entry-points."askchain.domains"]
    ethereum = "askchain.domains.ethereum.domain:EthereumDomain"

The core finds domains here, by id or by the tables of a database file, and never imports a domain's package, so a
new domain (another chain, another industry) is an installed package, not an edit of askchain. Plugins load on first
lookup; their modules should import their heavy parts (engines, builders) inside the methods.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from askchain.errors import ConfigError

if TYPE_CHECKING:
    import typer

    from askchain.config import DBSettings, Settings
    from askchain.db.base import Engine
    from askchain.rules.base import Rule
    from askchain.semantic import Layer
    from askchain.semantic.governed import SemanticModel

GROUP = "askchain.domains"


class Domain(ABC):
    """What the core needs from a domain. Question files are JSON lines with `question` and `gold_sql`; the
    evaluation set's rows also carry `id` and optionally `difficulty`, `category`, `order_matters` and
    `judged_columns`."""

    #: The domain's one id: its entry point's name, the db_id of its examples, evaluation questions and schemas
    #: (`Schema.db_id` of its engines), and the name of its default database (settings `db.default_domain`).
    name: str
    #: Its word on the command line: `askchain <command> ...` (its CLI) and `askchain eval <command>` (its questions).
    command: str
    #: Question/SQL pairs for few-shot examples (the example pool).
    example_files: tuple[Path, ...]
    #: The evaluation set.
    eval_file: Path
    #: The tables and columns as {"tables": {name: {"columns": [{"name": ...}]}}}: masks schema words in questions.
    schema_file: Path
    #: Concepts its data does not hold, each with the answer given instead of SQL (YAML, askchain.pipeline.abstain).
    not_in_data_file: Path | None = None
    #: Questions its data cannot answer (JSON lines `{"id", "question", "reason", "concept"}`): the abstention
    #: benchmark's unanswerable set over the domain's dataset (askchain.eval.abstention). None: the domain has none.
    unanswerable_file: Path | None = None
    #: The BigQuery dataset (`project.dataset`) holding this domain's data at scale, if there is one: a BigQuery
    #: engine over it carries the domain's notes and id, and `bigquery://PROJECT` alone means it.
    bigquery_dataset: str | None = None
    #: The governed semantic model (YAML, askchain.semantic.governed): the measures, dimensions and windows a
    #: semantic query names, compiled to the engine's SQL by a semantic-layer library. None: the domain has none.
    semantic_model_file: Path | None = None
    #: Pool questions with their semantic queries (JSON lines `{"id", "question", "query"}`), each verified against its
    #: gold: the semantic generator's few-shot examples. Never an evaluated question's sibling.
    semantic_examples_file: Path | None = None

    @property
    @abstractmethod
    def tables(self) -> frozenset[str]:
        """The tables a DuckDB file must hold to be this domain's database (it then opens with `engine`)."""

    @abstractmethod
    def notes(self) -> str:
        """Knowledge about the data that prompts carry with the schema (units, conventions, well-known values)."""

    @abstractmethod
    def engine(self, location: str, limits: DBSettings, **options) -> Engine:
        """An engine over a file of this domain, carrying `notes()` and naming its schema by the domain's id."""

    @abstractmethod
    def default_database(self, settings: Settings) -> Engine:
        """The domain's local dataset, built on first use: what a question without a database is asked over."""

    def schema_database(self, directory: Path, settings: Settings) -> Engine:
        """A database with the default one's schema prompt, for work that reads only the schema (preparing the
        prompt state at install). A domain whose default database takes long to build gives a small sample
        written under `directory`, so that the build stays with the first question."""
        return self.default_database(settings)

    def semantic_layer(self) -> Layer | None:
        """Metrics, entities and conventions as data, of which a question is shown the ones it calls for."""
        return None

    def rules(self) -> tuple[Rule, ...]:
        """The domain's checks and repairs (askchain.rules.base), beside the core's: its own rule classes, and the
        core's parametrised ones (units, column aliases, shorthands, windows) instantiated from its data."""
        return ()

    @cache
    def semantic_model(self) -> SemanticModel | None:
        """The governed semantic model of `semantic_model_file` over `schema_file`'s tables, loaded once, on first
        use (it imports Ibis and the semantic-layer library)."""
        if self.semantic_model_file is None:
            return None
        from askchain.semantic.governed import load_semantic_model

        return load_semantic_model(self.semantic_model_file, self.schema_file)

    def cli(self) -> typer.Typer | None:
        """A sub-app for `askchain <command>` (building or loading the dataset), if the domain has one."""
        return None


_loaded: dict[str, Domain] = {}
_lock = threading.Lock()


def _entry_points() -> dict:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def domain_names() -> list[str]:
    """The installed domains' ids, without loading them."""
    return sorted(_entry_points())


def get_domain(name: str) -> Domain:
    """The installed domain `name`, loaded on first use."""
    with _lock:
        if name not in _loaded:
            points = _entry_points()
            if name not in points:
                raise ConfigError(f"no domain '{name}' is installed (installed: {', '.join(sorted(points)) or 'none'})")
            _loaded[name] = _load(points[name])
        return _loaded[name]


def _load(point) -> Domain:
    try:
        domain = point.load()()
    except Exception as exc:  # a broken plugin is a configuration problem, reported in one line
        raise ConfigError(f"domain plugin '{point.name}' ({point.value}) failed to load: {exc}") from exc
    if not isinstance(domain, Domain) or domain.name != point.name:
        raise ConfigError(f"domain plugin '{point.name}' ({point.value}) must be a Domain whose name is '{point.name}'")
    return domain


def all_domains() -> list[Domain]:
    return [get_domain(name) for name in domain_names()]


def domain_of(schema_name: str) -> Domain | None:
    """The domain whose data a schema is (its engines name their schemas by the domain's id)."""
    return get_domain(schema_name) if schema_name in domain_names() else None


def domain_for_dataset(dataset: str) -> Domain | None:
    """The domain whose data a BigQuery dataset is."""
    return next((domain for domain in all_domains() if domain.bigquery_dataset == dataset), None)


def domain_for_tables(names: set[str]) -> Domain | None:
    """The domain whose tables a database holds (the one with most tables when several match)."""
    matching = [domain for domain in all_domains() if domain.tables <= names]
    return max(matching, key=lambda domain: len(domain.tables), default=None)
