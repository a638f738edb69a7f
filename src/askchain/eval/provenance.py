"""What a benchmark figure was made with, so that it can be reproduced: code, packages, model weights, data, machine.

Every `askchain eval` run that answers questions adds one entry to its folder's run.json ("runs") and marks each
record it writes with that entry's id (the record's "eval_run"), so a folder assembled from several runs (resumed,
continued with --first, or reusing another folder's rows) says which question came from which run. Paths are
recorded relative to the repository root, never absolute.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import platform
import subprocess
import uuid
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from askchain.config import Settings
from askchain.db.base import Engine
from askchain.eval.results import RUN_KEY
from askchain.llm.registry import named_models

#: The packages whose versions decide what a run computes.
KEY_PACKAGES = (
    "llama-cpp-python", "sqlglot", "duckdb", "langgraph", "qdrant-client", "sentence-transformers", "torch", "pydantic",
)
#: CPU extensions llama.cpp's speed depends on -> their /proc/cpuinfo flag (AMX: advertised by some VMs, trapping).
CPU_FLAGS = {"avx2": "avx2", "avx512": "avx512f", "amx": "amx_tile"}
#: The prefix LlamaCppModel puts before a model's name in its id.
LLAMACPP_PREFIX = "llamacpp:"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@lru_cache(maxsize=1)
def repo_root() -> Path:
    """The git checkout askchain runs from; the working directory when it is not run from one."""
    top = _git("rev-parse", "--show-toplevel")
    return Path(top) if top else Path.cwd()


def repo_relative(path: str | Path) -> str:
    """`path` relative to the repository root (a file outside it gets ../ steps), so run.json names no machine."""
    return os.path.relpath(Path(path).expanduser().resolve(), repo_root())


def from_repo(path: str | Path) -> Path:
    """A path as run.json records it, usable again (folders written before provenance hold absolute paths)."""
    return repo_root() / Path(path).expanduser()


def code_version(results_dir: Path) -> dict[str, Any]:
    """The commit and the tracked files that differ from it; the results folder being written does not count."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "changed_files": []}
    pathspec = [":(top)"]
    relative = repo_relative(results_dir)
    if not relative.startswith(".."):
        pathspec.append(f":(top,exclude){relative}")
    changed = (_git("diff", "--name-only", "HEAD", "--", *pathspec) or "").splitlines()
    return {"commit": commit, "dirty": bool(changed), "changed_files": changed}


def package_version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def file_sha256(path: Path, settings: Settings) -> str:
    """A file's SHA-256, remembered by (path, size, mtime) in the cache, so a 1 GB model file is hashed once."""
    path = Path(path).resolve()
    stat = path.stat()
    stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    cache_file = settings.paths.cache("file_sha256.json")
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, json.JSONDecodeError):
        known = {}
    entry = known.get(str(path))
    if entry and {k: entry.get(k) for k in stamp} == stamp:
        return entry["sha256"]
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(16 << 20):
            digest.update(block)
    known = {name: stamped for name, stamped in known.items() if Path(name).is_file()}  # forget deleted files
    known[str(path)] = {**stamp, "sha256": digest.hexdigest()}
    partial = cache_file.with_name(f"{cache_file.name}.{os.getpid()}")
    partial.write_text(json.dumps(known, indent=1))
    partial.replace(cache_file)  # whole or not at all: several runs may share the cache
    return digest.hexdigest()


def model_label(model_id: str) -> str:
    """A model as run.json names it: its id, or for a .gguf file its path relative to the repository root."""
    return repo_relative(model_id) if model_id.endswith(".gguf") else model_id


def model_provenance(model_id: str, path: Path | None, settings: Settings) -> dict[str, Any]:
    """The model and the SHA-256 of its weights: an embedded model's from models.yaml (its file is verified against
    it when assembled), a .gguf file's computed (once per version of the file); none for a remote model."""
    spec = named_models().get(model_id.removeprefix(LLAMACPP_PREFIX)) or {}
    if "embedded" in spec:
        return {"id": model_id, "file": spec["embedded"]["file_name"], "sha256": spec["embedded"]["sha256"]}
    path = Path(path or model_id).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return {"id": model_label(model_id), "file": repo_relative(path), "sha256": file_sha256(path, settings)}
    return {"id": model_id, "file": None, "sha256": None}


def dataset_provenance(name: str, split: str, source: str, limit: int | None, seed: int, first: int | None,
                       settings: Settings) -> dict[str, Any]:
    """The questions file (with its SHA-256) and how the sample was drawn from it."""
    path = Path(source)
    return {
        "name": name, "split": split, "file": repo_relative(path),
        "sha256": file_sha256(path, settings) if path.is_file() else None,
        "limit": limit, "seed": seed, "first": first,
    }


def database_build(engine: Engine) -> dict[str, Any] | None:
    """How a generated database file was built, from the record its builder keeps beside it (`<name>.json`, as the
    Ethereum dataset builder writes: end date, days, scale, seed, row counts); None for any other database."""
    path = Path(engine.location).expanduser()
    record = path.with_suffix(".json")
    if not path.is_file() or not record.is_file():
        return None
    return {"file": repo_relative(path), "build": json.loads(record.read_text())}


def machine() -> dict[str, Any]:
    """CPU model, cores and the vector extensions llama.cpp's speed depends on (None where the OS does not say)."""
    info: dict[str, str] = {}
    cpuinfo = Path("/proc/cpuinfo")
    for line in cpuinfo.read_text().splitlines() if cpuinfo.is_file() else []:
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    flags = set(info.get("flags", "").split())
    return {
        "cpu": info.get("model name") or platform.processor() or None,
        "cores": os.cpu_count(),
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        **{name: (flag in flags if flags else None) for name, flag in CPU_FLAGS.items()},
    }


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def run_entry(model_id: str, model_path: Path | None, dataset: dict[str, Any], settings: Settings,
              results_dir: Path) -> dict[str, Any]:
    """The provenance of one run of the evaluation, as run.json's "runs" holds it."""
    return {
        "id": new_run_id(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **code_version(results_dir),
        "askchain": package_version("askchain"),
        "python": platform.python_version(),
        "packages": {name: package_version(name) for name in KEY_PACKAGES},
        "model": model_provenance(model_id, model_path, settings),
        "llm_settings": settings.llm.model_dump(mode="json"),
        "dataset": dataset,
        "databases": {},
        "machine": machine(),
    }


def copied_runs(records: list[dict[str, Any]], source_meta: dict[str, Any], source_dir: Path,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Records copied from another folder, and the entries of the runs that answered them, marked as copied.

    Records of runs that recorded no provenance get one entry saying so (`"recorded": false`)."""
    source = repo_relative(source_dir)
    known = {entry["id"]: entry for entry in source_meta.get("runs") or []}
    unrecorded = {"id": new_run_id(), "recorded": False}
    entries: dict[str, dict[str, Any]] = {}
    marked = []
    for record in records:
        entry = known.get(record.get(RUN_KEY), unrecorded)
        if entry is unrecorded:
            record = {**record, RUN_KEY: entry["id"]}
        entries.setdefault(entry["id"], {**entry, "copied_from": entry.get("copied_from") or source})
        marked.append(record)
    return marked, list(entries.values())
