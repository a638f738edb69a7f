"""The main job with the embedded model on a local Ethereum dataset: GoogleSQL written, transpiled and run."""

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.domains.ethereum.engine import EthereumEngine

pytestmark = pytest.mark.llm


def test_top_miners_with_the_embedded_model(eth_db):
    engine = EthereumEngine(str(eth_db[0]))
    settings = get_settings().with_overrides(llm={"cache": False})
    result = ask("Which 10 miners have mined the most blocks?", engine, method="baseline", settings=settings, answer=False)
    assert result.error is None, result.sql
    assert "crypto_ethereum.blocks" in result.sql
    assert len(result.rows) == 10
    engine.close()
