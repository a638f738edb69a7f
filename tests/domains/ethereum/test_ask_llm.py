"""The main job with the embedded model on a local Ethereum dataset: GoogleSQL written, transpiled and run."""

import json

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.domains.ethereum.engine import EthereumEngine
from askchain.eval.compare import spider2_ex

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
    trace = json.loads((settings.paths.traces() / f"{result.run_id}.json").read_text())
    examples = next(s for s in trace["stages"] if s["stage"] == "examples")["examples"]
    assert len(examples) == 3 and {e["db_id"] for e in examples} == {"ethereum"}
    assert question not in {e["question"] for e in examples}


T = "`bigquery-public-data.crypto_ethereum.transactions`"
B = "`bigquery-public-data.crypto_ethereum.blocks`"
YESTERDAY = "DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)"


@pytest.mark.parametrize("question, gold", [
    ("What was the average gas price in gwei yesterday?",
     f"SELECT AVG(receipt_effective_gas_price) / 1e9 FROM {T} WHERE DATE(block_timestamp) = {YESTERDAY}"),
    ("What share of transactions failed in the last 7 days?",
     f"SELECT SAFE_DIVIDE(COUNTIF(receipt_status = 0), COUNT(*)) FROM {T} WHERE DATE(block_timestamp) >= "
     "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()"),
    ("How much ETH was burned yesterday?",
     f"SELECT SUM(base_fee_per_gas * gas_used) / 1e18 FROM {B} WHERE DATE(timestamp) = {YESTERDAY}"),
])
def test_the_questions_a_new_user_asks_first_answer_right_through_the_cli(ask_cli, eth_engine, question, gold):
    """Issue 15's three questions through `askchain ask` with the embedded model and the default pipeline."""
    result, _ = ask_cli(question)
    expected = eth_engine.execute(gold)
    assert result["error"] is None, result["sql"]
    assert spider2_ex(expected.columns, expected.rows, result["columns"], result["rows"]), (result["sql"], result["rows"])


#: Free SQL only: over Ethereum the semantic generator leads and answers a multi-step question with a plan of
#: governed queries; the free-text planner serves the questions no semantic model covers.
FREE_SQL_ONLY = {"ASKCHAIN_PIPELINE__GENERATORS__SEMANTIC__ENABLED": "false"}


def test_a_multi_step_question_is_planned_and_answered_step_by_step(ask_cli):
    """Issue 17's planner with the embedded model: the busiest fee recipient found first, then its blocks' load."""
    question = ("For the fee recipient that produced the most blocks yesterday, how many transactions did its blocks "
                "hold yesterday?")
    result, stderr = ask_cli(question, timeout=2400, env=FREE_SQL_ONLY)
    steps = result["steps"]
    assert 2 <= len(steps) <= 3, steps
    assert steps[0]["sql"] and steps[0]["row_count"] >= 1 and "miner" in steps[0]["sql"], steps[0]
    assert result["error"] is None and result["rows"], result["sql"]
    assert result["answer"].startswith("Answered in steps:") and "Plan, " in stderr


def test_a_question_on_what_a_ranking_found_is_answered_by_a_semantic_plan_in_one_query(ask_cli, eth_engine):
    """Issue 47's plans with the embedded model: the top senders found by one governed query, their token transfers
    by another taking its values, written by the layer as one query."""
    question = ("For the 3 addresses that sent the most transactions in the last 7 days, how many transactions did "
                "each send and how many token transfers did each send in that period? Most transactions first.")
    result, _ = ask_cli(question, timeout=2400)
    window = "DATE({t}) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE({t}) < CURRENT_DATE()"
    gold = eth_engine.execute(
        f"WITH top AS (SELECT from_address, COUNT(*) AS sent FROM {T} WHERE {window.format(t='block_timestamp')} "
        f"GROUP BY from_address ORDER BY sent DESC LIMIT 3) SELECT top.from_address, top.sent, COUNT(tt.log_index) "
        f"FROM top LEFT JOIN `bigquery-public-data.crypto_ethereum.token_transfers` tt "
        f"ON tt.from_address = top.from_address AND {window.format(t='tt.block_timestamp')} "
        f"GROUP BY top.from_address, top.sent ORDER BY top.sent DESC")
    assert result["error"] is None and result["steps"] == [], result["sql"]
    assert "WITH step_1 AS" in result["sql"] and "step_2" in result["sql"]  # the layer's composition, one query
    assert spider2_ex(gold.columns, gold.rows, result["columns"], result["rows"]), (result["sql"], result["rows"])
