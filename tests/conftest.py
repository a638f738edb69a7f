"""Shared fixtures: where the public datasets live, small databases, and isolated settings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ASKCHAIN_SHARED_DATA", REPO.parent / "shared" / "data"))
SPIDER = SHARED_DATA / "spider"


@pytest.fixture(scope="session")
def spider_db() -> Path:
    path = SPIDER / "database" / "concert_singer" / "concert_singer.sqlite"
    if not path.is_file():
        pytest.skip(f"Spider data not found at {SPIDER}")
    return path


@pytest.fixture
def sqlite_copy(spider_db, tmp_path) -> Path:
    """A private copy of a Spider database, so byte-identity checks cannot be disturbed by other tests."""
    target = tmp_path / "concert_singer.sqlite"
    shutil.copy(spider_db, target)
    return target


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    """Point caches at a per-session temp dir but keep the real model cache (assembling weights is slow)."""
    from askchain.config import get_settings

    data = tmp_path_factory.getbasetemp() / "askchain-data"
    monkeypatch.setenv("ASKCHAIN_PATHS__DATA_DIR", os.environ.get("ASKCHAIN_TEST_DATA_DIR", str(data)))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
