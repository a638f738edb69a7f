"""Fixtures for the evaluation harness: the public Spider and BIRD copies in the shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from askchain.config import shared_data_dir


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture(scope="session")
def spider_root() -> Path:
    return _require(shared_data_dir() / "spider")


@pytest.fixture(scope="session")
def bird_root() -> Path:
    return _require(shared_data_dir() / "bird")


@pytest.fixture(scope="session")
def spider(spider_root):
    """Spider dev, loaded once (hardness levels are computed for all 1034 questions)."""
    from askchain.eval.datasets import load_spider

    return load_spider(spider_root)
