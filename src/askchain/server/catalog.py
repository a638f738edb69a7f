"""The databases a server answers over, by name: the default domain's local dataset and those configured in settings."""

from __future__ import annotations

import threading
from typing import Any

from askchain.config import Settings
from askchain.db.base import Engine
from askchain.db.connect import resolve_database
from askchain.db.schema import Schema
from askchain.domain import domain_names


class UnknownDatabase(LookupError):
    """A name that is not in the catalog (the API answers 404)."""


class Catalog:
    """Names -> locations (paths or URLs) from `settings.server.databases`; engines open on first use and stay open."""

    def __init__(self, settings: Settings, databases: dict[str, str] | None = None):
        self.settings = settings
        self.locations: dict[str, str] = {**settings.server.databases, **(databases or {})}
        domain = settings.db.default_domain
        #: The default domain's local dataset, under the domain's id (`resolve_database(None, settings)`).
        self.domain_db = domain if domain in domain_names() and domain not in self.locations else None
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        return ([self.domain_db] if self.domain_db else []) + sorted(self.locations)

    @property
    def default(self) -> str | None:
        """settings.server.default_db if it names a database, else the domain's dataset, else the first configured."""
        names = self.names()
        chosen = self.settings.server.default_db
        return chosen if chosen in names else (names[0] if names else None)

    def __contains__(self, name: str) -> bool:
        return name in self.names()

    def engine(self, name: str | None) -> Engine:
        """The open engine for `name` (None: the default); raises UnknownDatabase for other names."""
        name = name or self.default
        if name is None or name not in self:
            raise UnknownDatabase(name or "(none configured)")
        with self._lock:
            if name not in self._engines:
                self._engines[name] = resolve_database(self.locations.get(name), self.settings)
            return self._engines[name]

    def describe(self) -> list[dict[str, Any]]:
        default = self.default
        listed = []
        for name in self.names():
            engine = self._engines.get(name)
            listed.append({
                "name": name,
                "default": name == default,
                "dialect": engine.query_dialect if engine else None,
            })
        return listed

    def close(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.close()
            self._engines.clear()


def schema_json(name: str, schema: Schema) -> dict[str, Any]:
    """The schema as the UI's sidebar and API clients read it."""
    return {
        "name": name,
        "dialect": schema.dialect,
        "tables": [
            {
                "name": table.display_name,
                "description": table.description,
                "row_count": table.row_count,
                "columns": [
                    {"name": c.name, "type": c.type, "primary_key": c.primary_key, "description": c.description}
                    for c in table.columns
                ],
                "foreign_keys": [
                    {"columns": fk.columns, "ref_table": fk.ref_table, "ref_columns": fk.ref_columns} for fk in table.foreign_keys
                ],
            }
            for table in schema.tables
        ],
    }
