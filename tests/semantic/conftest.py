"""The Ethereum semantic model, loaded once, and the question bank's pinned build for running what it compiles.

The build, its "now" and the pinning of CURRENT_DATE()/CURRENT_TIMESTAMP() are the bank test's own (read from
tests/domains/ethereum/test_bank.py), so a compiled query is judged against a gold on the very data the gold is
verified on.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.domain import get_domain

BANK_TEST = Path(__file__).parents[1] / "domains" / "ethereum" / "test_bank.py"


def bank_test_module():
    """The bank's test module, for its pinned build (BUILD, NOW) and `pinned`."""
    spec = importlib.util.spec_from_file_location("ethereum_bank_test", BANK_TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def semantic_model():
    return get_domain("ethereum").semantic_model()


@pytest.fixture(scope="session")
def bank():
    return bank_test_module()


@pytest.fixture(scope="session")
def pinned_engine(bank, tmp_path_factory):
    """The bank's pinned dataset behind the Ethereum engine."""
    from askchain.domains.ethereum.dataset import build_dataset
    from askchain.domains.ethereum.engine import EthereumEngine

    path = tmp_path_factory.mktemp("semantic_bank") / "crypto_ethereum.duckdb"
    build_dataset(path, progress=False, **bank.BUILD)
    engine = EthereumEngine(str(path), get_settings().db)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def run_pinned(bank, pinned_engine):
    """Run GoogleSQL on the pinned build with "now" pinned: (columns, rows)."""
    def run(sql: str):
        result = pinned_engine.execute(bank.pinned(sql).sql(dialect="bigquery"), max_rows=100_000)
        return result.columns, result.rows
    return run
