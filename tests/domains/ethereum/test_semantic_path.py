"""The semantic path through the whole pipeline on a small local Ethereum dataset, with a scripted model: a semantic
query that runs to rows is the answer (no free SQL is written) and says what it measured; one the model hands on, or
one that cannot be built, leaves the question to the free-SQL generators."""

from __future__ import annotations

import json

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.llm.fake import ScriptedModel

pytestmark = pytest.mark.slow  # each question runs the whole pipeline and the semantic layer's library

QUESTION = "What share of transactions failed in the last 7 days?"
FAILED_SHARE = {"model": "transactions", "measures": ["failed_share"], "dimensions": [],
                "window": {"name": "last_n_days", "n": 7}}
FREE_SQL = ("```sql\nSELECT COUNTIF(receipt_status = 0) / COUNT(*) FROM transactions WHERE DATE(block_timestamp) >= "
            "DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()\n```")


@pytest.fixture
def settings(tmp_path):
    return get_settings().with_overrides(llm={"cache": False}, pipeline={"answer": False, "planner": "never"},
                                         paths={"data_dir": tmp_path / "data"})


def asked(scripted: ScriptedModel) -> list[str]:
    return [request.template for request in scripted.requests]


def test_a_semantic_query_that_runs_is_the_answer_and_no_sql_is_sampled_when_it_leads_alone(eth_engine, settings):
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE)})
    alone = settings.with_overrides(pipeline={"lead_confirmation": 0})
    result = ask(QUESTION, eth_engine, model=scripted, settings=alone)
    assert result.error is None and len(result.rows) == 1 and 0 < result.rows[0][0] < 1
    assert "direct" not in asked(scripted)
    assert result.readings[0].startswith("failed share of transactions, a fraction")
    assert [c["generator"] for c in result.candidates] == ["semantic"]


def test_a_semantic_query_takes_the_one_period_its_question_names(eth_engine, settings):
    """"the past fortnight" is the last 14 days, whatever window the model picked by habit."""
    scripted = ScriptedModel({"semantic": json.dumps({**FAILED_SHARE, "window": {"name": "last_month"}})})
    alone = settings.with_overrides(pipeline={"lead_confirmation": 0})
    result = ask("What share of transactions failed over the past fortnight?", eth_engine, model=scripted,
                 settings=alone)
    assert result.error is None and "INTERVAL '14' DAY" in result.sql.replace("INTERVAL 14 DAY", "INTERVAL '14' DAY")
    assert any("the 14 full UTC days before today" in reading for reading in result.readings)


@pytest.mark.parametrize("reply", ['{"needs_sql": true}', json.dumps({**FAILED_SHARE, "measures": ["no_such_one"]})])
def test_a_question_the_semantic_model_does_not_answer_goes_to_free_sql(eth_engine, settings, reply):
    scripted = ScriptedModel({"semantic": reply, "direct": FREE_SQL})
    result = ask(QUESTION, eth_engine, model=scripted, settings=settings)
    assert result.error is None and len(result.rows) == 1
    assert "direct" in asked(scripted)
    assert {c["generator"] for c in result.candidates} == {"direct"}


def test_the_methods_that_measure_the_model_alone_never_lead(eth_engine, settings):
    scripted = ScriptedModel({"direct": FREE_SQL})
    ask(QUESTION, eth_engine, method="baseline", model=scripted, settings=settings)
    assert asked(scripted) == ["direct"]


SUCCEEDED_SHARE = FREE_SQL.replace("receipt_status = 0", "receipt_status = 1")


def direct_samples(scripted: ScriptedModel) -> int:
    return sum(request.n for request in scripted.requests if request.template == "direct")


def test_a_lead_confirmed_by_a_draft_sample_is_the_answer_after_that_wave(eth_engine, settings):
    confirming = settings.with_overrides(pipeline={"lead_confirmation": 2})
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE), "direct": FREE_SQL})
    result = ask(QUESTION, eth_engine, model=scripted, settings=confirming)
    assert direct_samples(scripted) == 2
    assert result.error is None and 0 < result.rows[0][0] < 0.5
    assert result.readings[0].startswith("failed share of transactions")
    assert {c["generator"] for c in result.candidates} == {"semantic", "direct"}


def test_an_unconfirmed_lead_joins_the_whole_drafts_vote_with_its_weight(eth_engine, settings):
    """Six draft samples on another result outvote the lead's vote; with the lead alone it would answer."""
    confirming = settings.with_overrides(pipeline={"lead_confirmation": 2, "agreement_exit": 0})
    scripted = ScriptedModel({"semantic": json.dumps(FAILED_SHARE), "direct": SUCCEEDED_SHARE})
    result = ask(QUESTION, eth_engine, model=scripted, settings=confirming)
    assert direct_samples(scripted) == settings.pipeline.generators["direct"].n
    assert result.error is None and result.rows[0][0] > 0.5
    assert "semantic" in {c["generator"] for c in result.candidates}


def test_an_unconfirmed_lead_stands_when_the_samples_drawn_to_confirm_it_agree_on_nothing(eth_engine, settings):
    """With `lead_challenge: 2`, two samples on two other results are no evidence against the governed query: it
    stands and the rest of the draft is not drawn; two agreeing on another result put it to the whole vote."""
    challenged = settings.with_overrides(pipeline={"lead_confirmation": 2, "lead_challenge": 2, "agreement_exit": 0})
    apart = ScriptedModel({"semantic": json.dumps(FAILED_SHARE),
                           "direct": lambda request, i: SUCCEEDED_SHARE.replace("7 DAY", f"{7 + i} DAY")})
    result = ask(QUESTION, eth_engine, model=apart, settings=challenged)
    assert direct_samples(apart) == 2
    assert result.error is None and 0 < result.rows[0][0] < 0.5
    assert result.readings[0].startswith("failed share of transactions")
    assert not any("agreed" in reason for reason in result.confidence_reasons)  # nothing agreed with it
    agreeing = ScriptedModel({"semantic": json.dumps(FAILED_SHARE), "direct": SUCCEEDED_SHARE})
    result = ask(QUESTION, eth_engine, model=agreeing, settings=challenged)
    assert direct_samples(agreeing) == settings.pipeline.generators["direct"].n
    assert result.error is None and result.rows[0][0] > 0.5


def test_a_doubted_lead_answers_only_once_a_draft_sample_confirms_it(eth_engine, settings):
    """The question counts failures; a lead measuring the average value is doubted: with the lead alone otherwise,
    two free samples are drawn to confirm it, and on another result the whole draft votes, the lead with one vote."""
    average_value = {**FAILED_SHARE, "measures": ["avg_value_eth"]}
    alone = settings.with_overrides(pipeline={"lead_confirmation": 0, "doubted_lead_confirmation": 2,
                                              "agreement_exit": 0})
    scripted = ScriptedModel({"semantic": json.dumps(average_value), "direct": FREE_SQL})
    result = ask(QUESTION, eth_engine, model=scripted, settings=alone)
    assert direct_samples(scripted) == settings.pipeline.generators["direct"].n
    assert result.error is None and 0 < result.rows[0][0] < 0.5
    lead = next(c for c in result.candidates if c["generator"] == "semantic")
    assert lead["votes"] == 1


def test_a_plans_later_step_filters_by_the_earlier_steps_result_and_answers_with_one_composed_query(eth_engine,
                                                                                                  settings):
    """The semantic generator answers with a plan; the layer writes it as one query, the found senders' transfers
    counted together, as the question asks."""
    top = {"model": "transactions", "measures": ["transaction_count"], "dimensions": ["from_address"],
           "window": {"name": "last_n_days", "n": 7},
           "order_by": [{"field": "transaction_count", "direction": "desc"}, {"field": "from_address",
                                                                              "direction": "asc"}], "limit": 3}
    theirs = {"model": "token_transfers", "measures": ["transfer_count"], "dimensions": [],
              "window": {"name": "last_n_days", "n": 7},
              "filters": [{"field": "from_address", "op": "in", "value": {"step": 1}}]}
    scripted = ScriptedModel({"semantic": json.dumps({"steps": [top, theirs]})})
    planned = settings.with_overrides(pipeline={"planner": "always", "lead_confirmation": 0,
                                                "doubted_lead_confirmation": 0})
    result = ask("How many token transfers did the 3 busiest senders of the last 7 days make together in that "
                 "period?", eth_engine, model=scripted, settings=planned)
    window = ("DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < "
              "CURRENT_DATE()")
    gold = eth_engine.execute(
        f"WITH top AS (SELECT from_address FROM transactions WHERE {window} GROUP BY from_address "
        f"ORDER BY COUNT(*) DESC, from_address LIMIT 3) SELECT COUNT(*) FROM token_transfers "
        f"WHERE from_address IN (SELECT from_address FROM top) AND {window}")
    assert result.error is None and [list(r) for r in result.rows] == [list(r) for r in gold.rows]
    assert "LIMIT 3" in result.sql and "token_transfers" in result.sql  # the whole question in one query
    assert set(asked(scripted)) == {"semantic"}  # no free-text planner, no other generator: the plan answers
