"""Open a database by path or URL; the engine is inferred from the URL scheme or the file header. A DuckDB file
holding all of an installed domain's tables opens with that domain's engine (its dialect, names, notes)."""

from __future__ import annotations

from pathlib import Path

from askchain.config import DBSettings, Settings, get_settings
from askchain.db.base import Engine
from askchain.domain import domain_for_dataset, domain_for_tables, get_domain
from askchain.errors import AskchainError, DatabaseError

_SQLITE_MAGIC = b"SQLite format 3\x00"
_DUCKDB_MAGIC = b"DUCK"  # at byte offset 8 of a DuckDB file


def open_database(location: str, limits: DBSettings | None = None, **options) -> Engine:
    """`location` is a file path, sqlite:///path, duckdb:///path, postgresql://… or bigquery://PROJECT."""
    limits = limits or get_settings().db
    scheme, sep, rest = location.partition("://")
    if sep:
        scheme = scheme.lower()
        if scheme in ("postgres", "postgresql"):
            from askchain.db.postgres import PostgresEngine

            return PostgresEngine(location, limits, **options)
        if scheme == "bigquery":
            from askchain.db.bigquery import BigQueryEngine

            if limits.default_domain:
                options.setdefault("default_dataset", get_domain(limits.default_domain).bigquery_dataset or "")
            engine = BigQueryEngine(location, limits, **options)
            domain = domain_for_dataset(engine.dataset)
            if domain:
                engine.notes, engine.domain_id = domain.notes(), domain.name
            return engine
        if scheme in ("sqlite", "duckdb"):
            return _open_file(rest.lstrip("/") and "/" + rest.lstrip("/") if rest.startswith("/") else rest, limits, scheme, options)
        raise DatabaseError(f"unsupported database URL scheme '{scheme}': use a file path, sqlite://, duckdb://, postgresql:// or bigquery://")
    return _open_file(location, limits, None, options)


def _open_file(path_text: str, limits: DBSettings, engine: str | None, options: dict) -> Engine:
    path = Path(path_text).expanduser()
    if path.is_dir():
        raise DatabaseError(f"{path} is a directory, not a database file")
    if not path.is_file():
        raise DatabaseError(f"database file {path} does not exist")
    try:
        with open(path, "rb") as f:
            header = f.read(16)
    except OSError as exc:
        raise DatabaseError(f"cannot read {path}: {exc.strerror}") from exc
    if engine is None:
        if header.startswith(_SQLITE_MAGIC):
            engine = "sqlite"
        elif header[8:12] == _DUCKDB_MAGIC:
            engine = "duckdb"
        else:
            raise DatabaseError(f"{path} is neither a SQLite nor a DuckDB database file")
    if engine == "sqlite":
        from askchain.db.sqlite import SQLiteEngine

        return SQLiteEngine(str(path), limits, **options)
    from askchain.db.duckdb import DuckDBEngine, table_names

    domain = domain_for_tables(table_names(path))
    if domain:
        return domain.engine(str(path), limits, **options)
    return DuckDBEngine(str(path), limits, **options)


def resolve_database(db: str | Engine | None, settings: Settings) -> Engine:
    """An open engine for `db` (a path, URL or engine); none given: the local dataset of `db.default_domain`."""
    if isinstance(db, Engine):
        return db
    if db:
        return open_database(db, settings.db)
    if not settings.db.default_domain:
        raise AskchainError("no database given: pass --db PATH (a SQLite or DuckDB file, or a database URL)")
    return get_domain(settings.db.default_domain).default_database(settings)
