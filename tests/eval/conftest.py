"""Fixtures for the evaluation harness: Spider dev from the shared data (spider_root is in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spider(spider_root):
    """Spider dev, loaded once (hardness levels are computed for all 1034 questions)."""
    from askchain.eval.datasets import load_spider

    return load_spider(spider_root)
