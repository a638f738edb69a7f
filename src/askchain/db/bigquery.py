"""BigQuery: metadata-only introspection, and every query dry-run first so nothing over the byte budget runs.

URL: `bigquery://PROJECT[/DATASET][?dataset=…&endpoint=…&examples=N]`. PROJECT runs (and pays for) the jobs;
DATASET is the one described to the model, `project.dataset` or a dataset of PROJECT, by default the default
domain's dataset (`bigquery-public-data.crypto_ethereum` for Ethereum); it is also the default dataset of every query, so unqualified table
names resolve. `endpoint` (or env BIGQUERY_EMULATOR_HOST) points the client at an emulator with anonymous
credentials. Introspection reads table metadata and, with `examples=N`, N example values per column from
`tabledata.list`, which BigQuery does not bill; it never runs a query.

Barriers: the guard on the parsed SQL (Engine.execute), then the dry run's statement type must be SELECT and
its byte estimate within `maximum_bytes_billed`, then the job itself carries that cap and a timeout. Give the
credentials only BigQuery Data Viewer and Job User roles so that the server refuses writes as well.
"""

from __future__ import annotations

import concurrent.futures
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from askchain.db.base import Engine, take_rows
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.errors import DatabaseError, QueryFailed, QueryRefused, require

ENDPOINT_ENV = "BIGQUERY_EMULATOR_HOST"
_URL_OPTIONS = {"dataset", "endpoint", "examples"}
_EXAMPLE_ROWS = 50  # rows read (free) to find example values

# Legacy type names the API reports -> the GoogleSQL names queries use.
_GOOGLESQL_TYPES = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL", "RECORD": "STRUCT"}


def human_bytes(n: int) -> str:
    """Decimal units, as BigQuery reports them: 1.2 TB, 10 GB."""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            break
        value /= 1000
    return f"{value:.1f}".rstrip("0").rstrip(".") + f" {unit}"


def check_scan(statement_type: str | None, estimated_bytes: int | None, limit: int) -> None:
    """Decide on a dry run's figures whether the query may run; raise QueryRefused otherwise."""
    if statement_type and statement_type.upper() != "SELECT":
        raise QueryRefused(f"only read-only queries are allowed: BigQuery reports statement type {statement_type}")
    if estimated_bytes is not None and estimated_bytes > limit:
        raise QueryRefused(
            f"query would scan {human_bytes(estimated_bytes)}, over the {human_bytes(limit)} limit (db.maximum_bytes_billed)"
        )


def googlesql_type(field) -> str:
    """A SchemaField's type as GoogleSQL writes it, records and repeats included."""
    if field.field_type in ("RECORD", "STRUCT"):
        base = "STRUCT<" + ", ".join(f"{f.name} {googlesql_type(f)}" for f in field.fields) + ">"
    else:
        base = _GOOGLESQL_TYPES.get(field.field_type, field.field_type)
    return f"ARRAY<{base}>" if field.mode == "REPEATED" else base


def flatten_fields(fields, prefix: str = "", repeated_parent: str | None = None) -> list[Column]:
    """Leaf columns with dotted names; a leaf under a repeated record says how to reach it."""
    columns = []
    for field in fields:
        name = prefix + field.name
        if field.field_type in ("RECORD", "STRUCT"):
            parent = name if field.mode == "REPEATED" else repeated_parent
            columns += flatten_fields(field.fields, name + ".", parent)
            continue
        notes = [field.description] if field.description else []
        if repeated_parent:
            notes.append(f"inside repeated {repeated_parent}: reach it with UNNEST({repeated_parent})")
        columns.append(Column(name, googlesql_type(field), "; ".join(notes) or None))
    return columns


def table_from_metadata(meta) -> Table:
    """A bigquery.Table (metadata only) as askchain's Table, named by its short id and queried fully qualified."""
    columns = flatten_fields(meta.schema)
    foreign_keys = []
    constraints = meta.table_constraints
    if constraints is not None:
        keys = set(constraints.primary_key.columns) if constraints.primary_key else set()
        for col in columns:
            col.primary_key = col.name in keys
        for fk in constraints.foreign_keys or []:
            foreign_keys.append(ForeignKey(
                [ref.referencing_column for ref in fk.column_references],
                fk.referenced_table.table_id,
                [ref.referenced_column for ref in fk.column_references],
            ))
    return Table(
        meta.table_id, columns, foreign_keys, meta.num_rows, meta.description or None,
        f"{meta.project}.{meta.dataset_id}.{meta.table_id}",
    )


def example_values(rows: list[dict], column: str, limit: int) -> list:
    """Up to `limit` distinct scalar values of a dotted column path in rows read from tabledata.list."""
    found: list = []
    for row in rows:
        for value in _values_at(row, column.split(".")):
            if value is None or value in found:
                continue
            found.append(value if isinstance(value, (int, float, str)) else str(value))
            if len(found) == limit:
                return found
    return found


def _values_at(value: Any, path: list[str]) -> list:
    if isinstance(value, list):
        return [v for item in value for v in _values_at(item, path)]
    if not path:
        return [value]
    if isinstance(value, dict):
        return _values_at(value.get(path[0]), path[1:])
    return []


@dataclass
class BigQueryEngine(Engine):
    dialect: str = "bigquery"
    #: `project.dataset` (or a dataset of the URL's project) to describe; see the module docstring.
    dataset: str = ""
    #: The dataset when the URL names none (the default domain's).
    default_dataset: str = ""
    #: API endpoint of an emulator; empty for Google's service with application default credentials.
    endpoint: str = ""
    #: Example values per column read with tabledata.list during introspection (0: none).
    examples: int = 0

    def __post_init__(self):
        super().__post_init__()
        bigquery = require("google.cloud.bigquery", "bigquery")
        project, url_options = _parse_url(self.location)
        self.project = project
        dataset = self.dataset or url_options.get("dataset") or self.default_dataset
        if not dataset:
            raise DatabaseError("name a BigQuery dataset: bigquery://PROJECT/DATASET")
        self.dataset = _qualify(dataset, project)
        self.endpoint = self.endpoint or url_options.get("endpoint") or os.environ.get(ENDPOINT_ENV, "")
        try:
            self.examples = int(self.examples or url_options.get("examples") or 0)
        except ValueError as exc:
            raise DatabaseError(f"bigquery option examples must be a number, not {url_options.get('examples')!r}") from exc
        self._bq = bigquery
        self._page_iterator = require("google.api_core.page_iterator", "bigquery")
        self._client = self._make_client()
        self._call(self._client.get_dataset, self.dataset)  # fail early on a wrong project, dataset or credentials

    def _make_client(self):
        options: dict[str, Any] = {"project": self.project}
        if self.endpoint:
            client_options = require("google.api_core.client_options", "bigquery")
            credentials = require("google.auth.credentials", "bigquery")
            endpoint = self.endpoint if "://" in self.endpoint else "http://" + self.endpoint
            options |= {
                "credentials": credentials.AnonymousCredentials(),
                "client_options": client_options.ClientOptions(api_endpoint=endpoint),
            }
        try:
            return self._bq.Client(**options)
        except Exception as exc:  # google.auth raises DefaultCredentialsError and friends
            raise DatabaseError(
                f"cannot create a BigQuery client for project {self.project}: {_reason(exc)} "
                "(run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS)"
            ) from exc

    def _call(self, method, *args, **kwargs):
        """A metadata API call bounded by the time limit; failures become one-line DatabaseErrors.

        Listings are read to the end here, since their pages are fetched while iterating."""
        retry = self._bq.DEFAULT_RETRY.with_deadline(self.limits.timeout_s)
        try:
            result = method(*args, retry=retry, timeout=self.limits.timeout_s, **kwargs)
            return list(result) if isinstance(result, self._page_iterator.Iterator) else result
        except Exception as exc:
            raise DatabaseError(f"BigQuery {self.dataset}: {_reason(exc)}") from exc

    # ---- introspection -------------------------------------------------------------------------
    def _introspect(self) -> Schema:
        tables = []
        for item in self._call(self._client.list_tables, self.dataset):
            table = table_from_metadata(self._call(self._client.get_table, item.reference))
            if self.examples:
                rows = [dict(r.items()) for r in self._call(self._client.list_rows, item.reference, max_results=_EXAMPLE_ROWS)]
                for col in table.columns:
                    col.examples = example_values(rows, col.name, self.examples)
            tables.append(table)
        tables.sort(key=lambda t: t.name)
        return Schema(tables, self.query_dialect, self.dataset)

    def example_rows(self, table: str, limit: int = 3) -> list[tuple]:
        """Rows through tabledata.list, which BigQuery does not bill."""
        ref = table if "." in table else f"{self.dataset}.{table}"
        return [tuple(r.values()) for r in self._call(self._client.list_rows, ref, max_results=int(limit))]

    # ---- execution -----------------------------------------------------------------------------
    def dry_run(self, sql: str):
        """The dry-run job of `sql`: statement type and bytes it would process, at no cost."""
        config = self._bq.QueryJobConfig(dry_run=True, use_query_cache=False, default_dataset=self.dataset)
        try:
            return self._client.query(sql, job_config=config, timeout=self.limits.timeout_s)
        except Exception as exc:
            raise QueryFailed(_reason(exc)) from exc

    def _run(self, sql, *, max_rows, timeout_s):
        plan = self.dry_run(sql)
        check_scan(plan.statement_type, plan.total_bytes_processed, self.limits.maximum_bytes_billed)
        config = self._bq.QueryJobConfig(
            default_dataset=self.dataset,
            maximum_bytes_billed=self.limits.maximum_bytes_billed,
            use_query_cache=True,
            job_timeout_ms=int(timeout_s * 1000),
        )
        job = None
        try:
            job = self._client.query(sql, job_config=config, timeout=timeout_s)
            result = job.result(max_results=max_rows + 1, timeout=timeout_s)
            rows = take_rows((tuple(r.values()) for r in result), max_rows, self.limits.memory_limit_mb)
            columns = [f.name for f in result.schema]
        except concurrent.futures.TimeoutError as exc:
            if job is not None:
                job.cancel()
            raise QueryFailed(f"query stopped at the {timeout_s:g} s time limit") from exc
        except Exception as exc:
            raise QueryFailed(_reason(exc)) from exc
        return columns, rows[:max_rows], len(rows) > max_rows, job.total_bytes_processed

    def close(self) -> None:
        self._client.close()


def _parse_url(location: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(location)
    if not parts.netloc:
        raise DatabaseError(f"BigQuery URL needs a project: bigquery://PROJECT[/DATASET], not {location!r}")
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(options) - _URL_OPTIONS
    if unknown:
        raise DatabaseError(f"unknown BigQuery URL option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_URL_OPTIONS))}")
    path = parts.path.strip("/")
    if path:
        options.setdefault("dataset", path)
    return parts.netloc, options


def _qualify(dataset: str, project: str) -> str:
    return dataset if "." in dataset else f"{project}.{dataset}"


def _reason(exc: Exception) -> str:
    """The server's own message when it gave one, else the exception's first line."""
    errors = getattr(exc, "errors", None)
    if errors and isinstance(errors[0], dict) and errors[0].get("message"):
        return errors[0]["message"]
    text = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).splitlines()[0]
    cause = getattr(exc, "cause", None)  # a RetryError wraps the error it kept meeting
    if isinstance(cause, Exception):
        text += f" (last error: {_reason(cause)[:200]})"
    return text
