"""Retrieval fixtures: settings whose stores live in tmp_path, and the BIRD superhero database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from askchain.config import Settings

SHARED_DATA = Path(os.environ.get("ASKCHAIN_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"))


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(paths={"cache_dir": tmp_path / "cache", "data_dir": tmp_path / "data"})


@pytest.fixture(scope="session")
def superhero_db() -> Path:
    path = SHARED_DATA / "bird" / "dev_databases" / "superhero" / "superhero.sqlite"
    if not path.is_file():
        pytest.skip(f"BIRD superhero database not found at {path}")
    return path
