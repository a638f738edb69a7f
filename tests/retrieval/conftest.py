"""Retrieval fixtures: settings whose stores live in tmp_path (BIRD's superhero_db is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from askchain.config import Settings


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(paths={"cache_dir": tmp_path / "cache", "data_dir": tmp_path / "data"})
