"""The offline recount of lead policies over a run's recorded candidates (askchain.eval.revote)."""

import json
import sys

import pytest
from typer.testing import CliRunner

from askchain.cli import app, main
from askchain.eval.revote import EMPTY_RESULT, LeadPolicy, recount, revote_table


def candidate(generator, result, right, votes=1, round_no=0):
    return {"generator": generator, "result": result, "right": right, "votes": votes, "round": round_no}


# the lead is wrong; two draft samples agree on the right result, one writes the lead's
WRONG_LEAD = {"id": "q1", "correct": {"spider2": False}, "candidates": [
    candidate("semantic", "aaa", False, votes=3), candidate("direct", "bbb", True, votes=3),
    candidate("direct", "aaa", False, votes=1), candidate("direct", EMPTY_RESULT, False, votes=2)]}
# the lead is right and no sample agrees with anything
RIGHT_LEAD = {"id": "q2", "correct": {"spider2": True}, "candidates": [
    candidate("semantic", "ccc", True, votes=3), candidate("direct", "ddd", False, votes=1)]}
# a doubted lead (one vote where the run's weight was 3) beside one sample that outvotes nothing
DOUBTED_LEAD = {"id": "q3", "correct": {"spider2": False}, "candidates": [
    candidate("semantic", "eee", False, votes=1), candidate("direct", "fff", True, votes=2)]}


#: What run.json records of the run's settings that the recount reads.
RUN_SETTINGS = {"lead_generator": "semantic", "draft_generator": "direct", "lead_confirmation": 6,
                "generators": {"semantic": {"n": 1, "options": {"weight": 3}}, "direct": {"n": 6, "options": {}}}}


def outcome(records, policy, doubted=LeadPolicy(2, 1)):
    return recount(records, policy, doubted, lead_weight=3, lead_generator="semantic", draft_generator="direct",
                   samples=6)


def test_the_lead_alone_answers_with_its_own_verdict():
    result = outcome([WRONG_LEAD, RIGHT_LEAD], LeadPolicy(0, 3))
    assert result.right == 1.0 and result.samples == 0.0


def test_a_vote_at_weight_one_lets_agreeing_samples_outvote_the_lead_but_weight_three_does_not():
    assert outcome([WRONG_LEAD], LeadPolicy(None, 1)).right == 1.0  # bbb 3 against aaa 1 + 1
    assert outcome([WRONG_LEAD], LeadPolicy(None, 3)).right == 0.0  # aaa 3 + 1 against bbb 3
    assert outcome([RIGHT_LEAD], LeadPolicy(None, 1)).right == 1.0  # a tie goes to the lead, drawn first


def test_confirmation_is_expected_over_the_samples_order():
    # one of six samples writes the lead's result: the first two include it with chance 1 - C(5,2)/C(6,2) = 1/3,
    # and then the wrong lead answers; otherwise the vote at weight 1 is right
    result = outcome([WRONG_LEAD], LeadPolicy(2, 1))
    assert result.right == pytest.approx(2 / 3)
    assert result.samples == pytest.approx(1 / 3 * 2 + 2 / 3 * 6)


def test_a_challenged_lead_is_put_to_the_vote_only_when_the_first_samples_agree_on_another_result():
    # of the C(6,2) = 15 first pairs, 3 hold two of the three samples on bbb (the vote at weight 1, right), 5 hold
    # one on aaa (the lead confirmed, wrong); the other 7 disagree and leave the wrong lead standing
    result = outcome([WRONG_LEAD], LeadPolicy(2, 1, challenge=2))
    assert result.right == pytest.approx(3 / 15)
    assert result.samples == pytest.approx(12 / 15 * 2 + 3 / 15 * 6)
    assert outcome([RIGHT_LEAD], LeadPolicy(2, 1, challenge=2)).right == 1.0


def test_only_the_draft_generators_first_round_samples_can_confirm_or_challenge_the_lead():
    # another generator's two candidates on the lead's result are no draft samples: the lead is confirmed with the
    # same chance as before (1/3, not the 4/5 they would give as two more of six), though they vote in the end
    other = {**WRONG_LEAD, "candidates": WRONG_LEAD["candidates"] + [candidate("query_plan", "aaa", False, votes=2)]}
    assert outcome([other], LeadPolicy(2, 1)).samples == pytest.approx(1 / 3 * 2 + 2 / 3 * 6)


def test_a_doubted_lead_follows_its_own_policy():
    assert outcome([DOUBTED_LEAD], LeadPolicy(0, 3)).right == 1.0  # doubted: confirmed by none, outvoted
    assert outcome([DOUBTED_LEAD], LeadPolicy(0, 3), doubted=LeadPolicy(0, 1)).right == 0.0


def test_no_lead_that_ran_leaves_the_draft_vote():
    record = {"id": "q4", "correct": {"spider2": True}, "candidates": [
        candidate("semantic", EMPTY_RESULT, False, votes=3), candidate("direct", "ggg", True, votes=4)]}
    assert outcome([record], LeadPolicy(0, 3)).right == 1.0


def test_the_table_and_the_command(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"method": "pipeline", "pipeline_settings": RUN_SETTINGS}))
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in (WRONG_LEAD, RIGHT_LEAD, DOUBTED_LEAD)))
    table = revote_table(tmp_path)
    assert "(semantic leading at weight 3, 6 draft samples)" in table
    assert "| alone | 2.0 |" in table and "| every sample drawn, vote at weight 1 | 3.0 | 6.0 |" in table
    result = CliRunner().invoke(app, ["eval", "revote", str(tmp_path)])
    assert result.exit_code == 0 and "confirm 2, vote at weight 1 when unconfirmed" in result.output


def test_the_command_refuses_a_folder_without_a_pipeline_run_or_a_lead(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["askchain", "eval", "revote", str(tmp_path)])
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 2 and "no pipeline run" in capsys.readouterr().err
    (tmp_path / "run.json").write_text(json.dumps({"method": "pipeline", "pipeline_settings": {"lead_generator": None}}))
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 2 and "without a lead generator" in capsys.readouterr().err
    drew_two = {**RUN_SETTINGS, "lead_confirmation": 2}  # the defaults' run: most samples never drawn
    (tmp_path / "run.json").write_text(json.dumps({"method": "pipeline", "pipeline_settings": drew_two}))
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 2 and "drew fewer than its 6 draft samples" in capsys.readouterr().err
