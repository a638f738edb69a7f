"""The planner: which questions may need steps (no model call for the others), the plan's reply read safely, and a
two-step question answered step by step with the first step's values in the second step's prompt."""

from __future__ import annotations

import json
import re

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.db.base import QueryResult
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.graph import Shape, compiled_graph
from askchain.pipeline.methods import method_settings
from askchain.pipeline.plan import StepResult, earlier_results, may_need_a_plan, may_need_steps, plan_steps


@pytest.mark.parametrize("question, needs", [
    ("Which tokens did the 5 most active senders of last week move, and how much of each?", True),
    ("Compare this week's failed-transaction share with the same week a month ago", True),
    ("For the builder that built the most blocks yesterday, how many transactions did its blocks hold?", True),
    ("How many transactions were there in the last 7 days versus the 7 days before?", True),
    ("Of the 10 richest addresses, how many deployed a contract? List the tokens of those contracts.", True),
    ("Of the 10 addresses that paid the most fees in the last 7 days, how many deployed a contract?", True),
    ("On the day of the last 30 days with the most transactions, what share of that day's transactions failed?", True),
    ("Which 10 miners mined the most blocks in the last 30 days?", False),
    ("Which 10 miners mined the most blocks in the last 30 days, and how many blocks each?", False),
    ("Which car models have the highest safety rating?", False),
    ("Daily transaction counts for this month so far.", False),
    ("How much ETH was burned yesterday?", False),
])
def test_only_questions_with_a_dependent_step_are_planned(question, needs):
    assert may_need_steps(question) is needs


@pytest.mark.parametrize("question, offered", [
    ("Which sender paid the most fees yesterday, and how many transactions did that address send last week?", True),
    ("Which hour had the most transfers yesterday, and what share of that hour's transfers were USDC?", True),
    ("Which block had the most gas yesterday, and what share of that block's gas went to swaps?", True),
    ("Which 3 builders made the most blocks in the last 30 days, and for each, how much did their blocks burn?", True),
    ("Which address withdrew the most ETH last month, and how much ETH did it receive yesterday?", True),
    ("For the 3 busiest senders yesterday, how many token transfers did those senders make?", True),
    ("Daily transaction counts for this month so far.", False),
    ("How many transactions were there on those days?", False),
    ("How much gas did this month use so far?", False),
    ("For each of the past 7 days, how many addresses sent their first transaction on that day?", False),
])
def test_a_plan_is_offered_where_the_question_refers_back_to_what_it_found(question, offered):
    """Words of a set or an entity found first offer the semantic plan; they never start the free-text planner."""
    assert may_need_a_plan(question) is offered
    assert not may_need_steps(question) or offered


def test_a_plan_reply_that_is_not_a_plan_answers_in_one_step(concert_db):
    from askchain.db.connect import resolve_database

    schema = resolve_database(str(concert_db), get_settings()).schema()
    question = "For the stadium with the largest capacity, which singers sang there?"
    for reply, steps in [
        ('{"steps": ["Which stadium has the largest capacity?", "Which singers sang at the stadium of step 1?"]}',
         ["Which stadium has the largest capacity?", "Which singers sang at the stadium of step 1?"]),
        ('{"steps": ["one", "two", "three", "four"]}', [question]),  # more steps than allowed
        ("I would first find the stadium", [question]),  # not JSON
        ('{"steps": []}', [question]),
    ]:
        model = ScriptedModel({"plan": reply})
        assert plan_steps(question, schema, model, max_steps=3, seed=0) == steps
        assert "stadium, singer, concert, singer_in_concert" in model.requests[0].messages[-1][1]


def test_earlier_results_show_whole_values():
    address = "0x4838b106fce9647bdf1e7877bf73ce8b0bad5f97"
    found = QueryResult(["address", "blocks"], [(address, 12), ("0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5", 9)], 0.01)
    text = earlier_results([StepResult("Top builders?", "SELECT ...", found, None),
                            StepResult("Their fees?", None, None, "no candidate SQL was produced")], rows=1)
    assert address in text and "1 more rows" in text and '(no result: "no candidate SQL was produced")' in text


STADIUM = ("SELECT c.Stadium_ID, s.Name FROM concert c JOIN stadium s ON s.Stadium_ID = c.Stadium_ID "
           "GROUP BY c.Stadium_ID, s.Name ORDER BY COUNT(*) DESC LIMIT 1")


def direct(request, i):
    """Step 1 finds the stadium; step 2 filters on the id it reads from the earlier results in its prompt."""
    question = request.values["question"]
    if "step 1" not in question:
        return f"```sql\n{STADIUM}\n```"
    stadium_id = re.search(r"^\s+'(\d+)', 'Millbrook Park'$", question, re.MULTILINE).group(1)
    return ("```sql\nSELECT DISTINCT s.Name FROM singer s JOIN singer_in_concert sc ON sc.Singer_ID = s.Singer_ID "
            f"JOIN concert c ON c.concert_ID = sc.concert_ID WHERE c.Stadium_ID = '{stadium_id}' ORDER BY s.Name\n```")


def settings():
    return get_settings().with_overrides(llm={"cache": False}, pipeline={"examples_k": 0, "value_retrieval": False})


def test_a_two_step_question_is_answered_step_by_step(concert_db):
    model = ScriptedModel({
        "plan": json.dumps({"steps": ["Which stadium held the most concerts?",
                                      "Which singers sang in concerts at the stadium found in step 1?"]}),
        "direct": direct,
        "summarize": "They are the singers listed.",
    })
    events = []
    result = ask("For the stadium that held the most concerts, which singers sang there?", str(concert_db),
                 model=model, settings=settings(), on_event=events.append)
    assert result.error is None, result.sql
    assert "Stadium_ID = '2'" in result.sql  # Millbrook Park held two concerts, every other stadium one
    assert result.rows == [["Etienne Roux"], ["Hugo Lefevre"], ["Jules Marchand"]]
    assert [s["question"] for s in result.steps] == ["Which stadium held the most concerts?",
                                                     "Which singers sang in concerts at the stadium found in step 1?"]
    assert result.steps[0]["sql"] == STADIUM and result.steps[0]["row_count"] == 1
    assert result.answer.startswith("Answered in steps:\n1. Which stadium held the most concerts? (1 row)")
    assert result.confidence in ("high", "medium", "low") and all(r.startswith("step ") for r in result.confidence_reasons)
    assert {"type": "plan", "steps": [s["question"] for s in result.steps]} in events
    assert {e["step"] for e in events if e.get("type") == "sql"} == {1, 2}
    trace = json.loads((get_settings().paths.traces() / f"{result.run_id}.json").read_text())
    steps = next(s for s in trace["stages"] if s["stage"] == "steps")["steps"]
    assert [len(s["stages"]) > 3 for s in steps] == [True, True]


def test_a_question_without_step_words_costs_no_plan_call(concert_db):
    model = ScriptedModel({"direct": "```sql\nSELECT count(*) FROM singer\n```", "summarize": "Six."})
    result = ask("How many singers are there?", str(concert_db), model=model, settings=settings())
    assert result.rows == [[6]] and result.steps == []
    assert "plan" not in {request.template for request in model.requests}


@pytest.mark.parametrize("method, planned", [("baseline", False), ("self-consistency", False), ("pipeline", True)])
def test_the_comparison_methods_have_no_planner(method, planned):
    nodes = compiled_graph(Shape.of(method_settings(get_settings(), method).pipeline)).get_graph().nodes
    assert ("plan" in nodes) is planned and ("steps" in nodes) is planned


def test_a_step_that_finds_nothing_ends_the_plan(concert_db):
    model = ScriptedModel({
        "plan": json.dumps({"steps": ["Which stadium is in Atlantis?", "Which singers sang at the stadium of step 1?",
                                      "How old are they?"]}),
        "direct": "```sql\nSELECT Name FROM stadium WHERE Location = 'Atlantis'\n```",
        "summarize": "No stadium is in Atlantis.",
    })
    result = ask("For the stadium that is in Atlantis, which singers sang there?", str(concert_db), model=model,
                 settings=settings())
    assert [s["question"] for s in result.steps] == ["Which stadium is in Atlantis?"] and result.rows == []
    drafted = [request for request in model.requests if request.template == "direct"]
    assert drafted and not any("sang at the stadium" in text for request in drafted
                               for _, text in request.messages)  # steps 2 and 3 never ran


@pytest.mark.parametrize("third, why", [
    ("SELECT Age FROM singer WHERE Name = 'Nobody'", "no rows"),  # finds nothing
    ("SELECT Nickname FROM singer", "Nickname"),                  # fails, and its revisions fail the same way
])
def test_a_later_step_that_fails_leaves_the_earlier_answer_standing(concert_db, third, why):
    def direct_or_third(request, i):
        return f"```sql\n{third}\n```" if "How old" in request.values["question"] else direct(request, i)

    model = ScriptedModel({
        "plan": json.dumps({"steps": ["Which stadium held the most concerts?",
                                      "Which singers sang in concerts at the stadium found in step 1?",
                                      "How old are the singers found in step 2?"]}),
        "direct": direct_or_third,
        "revise": f"```sql\n{third}\n```",
        "summarize": "They are the singers listed.",
    })
    result = ask("For the stadium that held the most concerts, which singers sang there, and how old are they?",
                 str(concert_db), model=model, settings=settings())
    assert not result.abstained and result.error is None
    assert result.rows == [["Etienne Roux"], ["Hugo Lefevre"], ["Jules Marchand"]]  # step 2's answer
    assert [s["row_count"] for s in result.steps] == [1, 3, 0]
    assert result.confidence == "low"
    assert any(r.startswith("step 3: it failed (") and why in r and r.endswith("so the answer is step 2's")
               for r in result.confidence_reasons), result.confidence_reasons


def test_when_a_later_step_fails_the_answering_steps_alternatives_are_shown(concert_db):
    """Step 2's samples split between two results; step 3 fails: the answer is step 2's, with its alternative."""
    def split_second_step(request, i):
        question = request.values["question"]
        if "How old" in question:
            return "```sql\nSELECT Nickname FROM singer\n```"
        if "step 1" in question and i % 2:
            return "```sql\nSELECT Name FROM singer ORDER BY Name LIMIT 1\n```"
        return direct(request, i)

    model = ScriptedModel({
        "plan": json.dumps({"steps": ["Which stadium held the most concerts?",
                                      "Which singers sang in concerts at the stadium found in step 1?",
                                      "How old are the singers found in step 2?"]}),
        "direct": split_second_step,
        "revise": "```sql\nSELECT Nickname FROM singer\n```",
        "summarize": "They are the singers listed.",
    })
    result = ask("For the stadium that held the most concerts, which singers sang there, and how old are they?",
                 str(concert_db), model=model, settings=settings())
    assert [s["row_count"] for s in result.steps][2] == 0 and result.confidence == "low"
    assert result.alternatives, "step 2's other result is shown beside its answer"
    assert {len(a["rows"]) for a in result.alternatives} | {len(result.rows)} == {1, 3}
