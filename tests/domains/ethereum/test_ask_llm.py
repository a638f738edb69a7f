"""The main job with the embedded model on a local Ethereum dataset: GoogleSQL written, transpiled and run."""

import json

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.domains.ethereum.engine import EthereumEngine

pytestmark = pytest.mark.llm


def test_top_miners_with_the_embedded_model(eth_db):
    engine = EthereumEngine(str(eth_db[0]), get_settings().db)
    settings = get_settings().with_overrides(llm={"cache": False})
    result = ask("Which 10 miners have mined the most blocks?", engine, method="baseline", settings=settings, answer=False)
    assert result.error is None, result.sql
    assert "crypto_ethereum.blocks" in result.sql
    assert len(result.rows) == 10
    engine.close()


def test_pipeline_prompts_with_the_domains_own_examples(eth_db):
    """The default pipeline on the Ethereum engine: 3 examples from the domain's questions (never the asked one)."""
    engine = EthereumEngine(str(eth_db[0]), get_settings().db)
    settings = get_settings().with_overrides(
        llm={"cache": False}, pipeline={"answer": False, "generators": {"direct": {"n": 2}}, "max_revisions": 1},
    )
    question = "Which 10 miners have mined the most blocks?"  # eth-002 of the domain's questions
    result = ask(question, engine, method="pipeline", model="qwen2.5-coder-1.5b", settings=settings)
    engine.close()
    assert result.error is None and len(result.rows) == 10, result.sql
    trace = json.loads((settings.paths.data("traces", "x").parent / f"{result.run_id}.json").read_text())
    examples = next(s for s in trace["stages"] if s["stage"] == "examples")["examples"]
    assert len(examples) == 3 and {e["db_id"] for e in examples} == {"ethereum"}
    assert question not in {e["question"] for e in examples}
