"""One small synthetic dataset per test session (45 days at 0.2 % of mainnet's blocks, ending today)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from askchain.config import get_settings
from askchain.domains.ethereum.dataset import build_dataset, utc_today
from askchain.domains.ethereum.engine import EthereumEngine

SMALL = dict(days=45, scale=0.002, seed=11)


@pytest.fixture(scope="session")
def build_small(tmp_path_factory):
    """Builds the small test dataset ending on a given day; returns its path and row counts."""
    def build(end):
        path = tmp_path_factory.mktemp("eth") / "crypto_ethereum.duckdb"
        return path, build_dataset(path, end=end, progress=False, **SMALL)
    return build


@pytest.fixture(scope="session")
def eth_db(build_small):
    return build_small(utc_today())


@pytest.fixture(scope="session")
def eth_engine(eth_db):
    engine = EthereumEngine(str(eth_db[0]), get_settings().db)
    yield engine
    engine.close()


@pytest.fixture
def sql(eth_engine):
    """Run GoogleSQL through the safe executor and return the rows."""
    return lambda text: eth_engine.execute(text, max_rows=1_000_000).rows


@pytest.fixture
def ask_over():
    """`askchain ask --json --db DB QUESTION` in a process of its own, response cache off: its JSON answer and its
    stderr (the stages it printed), once it exited with 0."""
    def ask(db, question: str, timeout: int = 1800, env: dict[str, str] | None = None) -> tuple[dict, str]:
        env = {**os.environ, "ASKCHAIN_LLM__CACHE": "false", **(env or {})}
        out = subprocess.run([sys.executable, "-m", "askchain.cli", "ask", "--db", str(db), question, "--json"],
                             capture_output=True, text=True, timeout=timeout, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout), out.stderr
    return ask


@pytest.fixture
def ask_cli(eth_db, ask_over):
    """ask_over on the small dataset: a function (question, timeout, env) -> (JSON answer, stderr)."""
    return lambda question, timeout=1800, env=None: ask_over(eth_db[0], question, timeout, env)
