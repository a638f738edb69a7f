"""Abstention: the schema's coverage of a question's words, the domain's declared missing concepts, the model asked
where a word lives, and the failures that name what is missing; answerable questions do not abstain."""

import json

import pytest

from askchain import ask
from askchain.config import get_settings
from askchain.db import open_database
from askchain.domain import get_domain
from askchain.eval.abstention import SPIDER_UNANSWERABLE, read_unanswerable
from askchain.llm.fake import ScriptedModel
from askchain.pipeline.abstain import concept_words, declared_absent, load_concepts, placed
from askchain.pipeline.coverage import content_terms, coverage, matches, phrases, words_of

ETHEREUM = get_domain("ethereum")
CONCEPTS = load_concepts(ETHEREUM.not_in_data_file)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---- coverage ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question,terms", [
    ("How many singers does each country have?", ["singer", "country"]),  # "does" is no "doe", counts are no terms
    ("What is the average ticket price of concerts held in 2014?", ["ticket", "price", "concert", "held"]),
    ("How many transfers went to 0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad?", ["transfer", "went"]),  # no hex words
    ("List the Song_release_year of singers", ["song", "release", "singer"]),
])
def test_content_terms(question, terms):
    assert content_terms(question) == terms


@pytest.mark.parametrize("term,vocabulary,found", [
    ("singer", {"singer"}, True),
    ("created", {"creation"}, True),  # one stem
    ("transaction", {"transfer"}, False),  # a common prefix of two ideas
    ("high", {"highschooler"}, True),  # parts of a name written as one word
    ("schooler", {"highschooler"}, True),
    ("age", {"package"}, False),  # short terms match whole words only
    ("salary", {"bonus", "employee", "name"}, False),
])
def test_matches(term, vocabulary, found):
    assert matches(term, frozenset(vocabulary)) is found


def test_coverage_reads_names_descriptions_notes_and_value_hints(concert_db):
    schema = open_database(str(concert_db)).schema()
    covered = coverage("What is the average ticket price of concerts in Harbour Town?", schema)
    assert covered.terms == ("ticket", "price", "concert", "harbour", "town")  # Harbour Town: an example value
    assert covered.missing == ("ticket", "price") and covered.share == 0.6
    unhinted = coverage("Which stadium is in Kingsford?", schema)
    assert unhinted.missing == ("kingsford",) and unhinted.missing_concepts == ()  # a name of a thing, not a concept
    hinted = coverage("Which stadium is in Kingsford?", schema, ["stadium.Location = 'Kingsford'"])
    assert hinted.missing == () and hinted.share == 1.0
    assert coverage("How many are there?", schema).share is None


def test_phrases_keep_the_questions_words_side_by_side():
    question = "What is the email address of each shop's manager, and their phone?"
    assert phrases(question, {"email", "address", "phone"}) == ["email address", "phone"]
    assert words_of("Song_release_year") == {"song", "release", "year"}


@pytest.mark.parametrize("missing,asked", [
    (("salary",), ["salary"]),
    (("delayed", "departing", "predominantly"), []),  # verb forms and adverbs name no data
    (("used", "but", "speed"), ["speed"]),  # words around data; -eed is no verb form
])
def test_concept_words_leave_out_words_around_data(missing, asked):
    from askchain.pipeline.coverage import Coverage

    assert concept_words(Coverage(missing, missing, missing)) == asked


@pytest.mark.parametrize("answer,found", [
    ("singer.Country", True), ("Country", True), ("`singer.Age`", True),
    ("none", False), ("", False), (None, False), ("singer.salary", False), ("payroll.salary", False),
])
def test_placed_only_in_a_column_that_exists(concert_db, answer, found):
    assert placed(answer, open_database(str(concert_db)).schema()) is found


@pytest.mark.parametrize("question,reply,absent", [
    ("What is the email address of each singer?", '{"email address": "none"}', ["email address"]),
    ("What is the email address of each singer?", '{"email": "none"}', ["email address"]),  # keyed by one of its words
    ("What is the email address of each singer?", '{"Name": "none"}', ["email address"]),  # the only answer asked for
    ("What is the email address of each singer?", '{"email address": "singer.Name"}', []),
    ("What is the ticket price and the sponsor of each concert?", '{"ticket price": "none"}', ["ticket price"]),
    ("What is the ticket price and the sponsor of each concert?", '{"price": "concert.Theme", "Name": "none"}', []),
    ("What is the email address of each singer?", "no JSON here", []),
])
def test_unplaced_words_read_the_models_reply(concert_db, question, reply, absent):
    from askchain.generation.context import GenerationContext
    from askchain.pipeline.abstain import unplaced_words

    schema = open_database(str(concert_db)).schema()
    words = concept_words(coverage(question, schema))
    ctx = GenerationContext(question, "sqlite", "SQLite", schema.ddl())
    assert unplaced_words(question, words, ctx, schema, ScriptedModel({"place_words": reply}), seed=1) == absent


# ---- the Ethereum domain's declared missing concepts ---------------------------------------------------------------

@pytest.mark.parametrize("entry", _lines(ETHEREUM.unanswerable_file), ids=lambda e: e["id"])
def test_every_unanswerable_ethereum_question_is_declared_absent(entry):
    found = declared_absent(entry["question"], CONCEPTS)
    assert found is not None and found.concept == entry["concept"] and found.text.startswith("This data has no ")


@pytest.mark.parametrize("question,concept", [  # phrasings the concepts were not written against
    ("How much is 1 ETH worth in euros?", "prices"),
    ("Show the ENS domains registered last month.", "ens"),
    ("Which wallets belong to Coinbase?", "labels"),
    ("Forecast next month's number of transactions.", "forecasts"),
    ("How many transactions on Optimism used blobs?", "other chains"),
    ("What does Reddit think about the last hard fork?", "off-chain"),
])
def test_new_phrasings_of_missing_concepts(question, concept):
    assert declared_absent(question, CONCEPTS).concept == concept


@pytest.mark.parametrize("question", [
    *(entry["question"] for entry in _lines(ETHEREUM.eval_file)),  # the domain's evaluation questions
    "What is the average gas price in gwei over the last 7 days?",
    "What are the names and symbols of the 10 tokens with the most transfers?",
    "How many Wrapped BTC transfers happened last week?",
    "What is the total supply of USD Coin?",
    "What was the highest blob gas price paid yesterday?",
])
def test_answerable_ethereum_questions_are_not_declared_absent(question):
    assert declared_absent(question, CONCEPTS) is None


# ---- through the graph, with the scripted model over the fixture database ------------------------------------------

def settings(**pipeline):
    """The model check switched on (`abstention: llm`, not the default) where a test does not say otherwise."""
    return get_settings().with_overrides(pipeline={"examples_k": 0, "value_retrieval": False, "semantic_layer": False,
                                                   "abstention": "llm",
                                                   "answer": False, **pipeline})


TICKETS = "What is the average ticket price of the concerts held in each stadium?"


@pytest.mark.parametrize("placement", ['{"ticket price": "none"}', '{"ticket price": "concert.ticket_price"}'])
def test_a_word_the_model_places_in_no_existing_column_is_absent(concert_db, placement):
    model = ScriptedModel({"place_words": placement})
    events = []
    result = ask(TICKETS, str(concert_db), model=model, settings=settings(), on_event=events.append)
    assert result.abstained and result.sql is None and result.error is None and result.rows == []
    assert result.answer == "This data has no ticket price: no table or column of the concert_singer database holds it."
    assert result.confidence is None and result.confidence_reasons == ["the model found no column for ticket price"]
    assert [r.template for r in model.requests] == ["place_words"]  # no SQL was written
    assert model.requests[0].values["words"] == '"ticket price"'
    assert {"type": "abstained", "text": result.answer, "reason": "model", "concept": "ticket price"} in events
    assert {"type": "answer", "text": result.answer} in events
    assert result.public()["abstained"] is True and result.public()["sql"] is None


def test_a_word_placed_in_an_existing_column_is_answered(concert_db):
    model = ScriptedModel({"place_words": '{"nation": "singer.Country"}',
                           "direct": "SELECT Name FROM singer WHERE Country = 'France'"})
    result = ask("Which singers have France as their nation?", str(concert_db), model=model, settings=settings())
    assert not result.abstained and len(result.rows) == 4 and result.confidence == "high"


def test_an_unreadable_reply_is_no_reason_to_abstain(concert_db):
    model = ScriptedModel({"place_words": "I think the ticket price is somewhere.",
                           "direct": "SELECT avg(Average) FROM stadium"})
    assert not ask(TICKETS, str(concert_db), model=model, settings=settings()).abstained


@pytest.mark.parametrize("question", [
    "How many singers are from France?",
    "What is the name of the stadium with the largest capacity?",
    "Show each concert's name with its stadium's name.",
    "How many singers performed in each concert?",
    "What are the themes of the concerts held in 2015?",
])
def test_questions_the_schema_covers_ask_the_model_nothing_and_are_answered(concert_db, question):
    model = ScriptedModel({"direct": "SELECT count(*) FROM singer"})
    result = ask(question, str(concert_db), model=model, settings=settings())
    assert not result.abstained and result.sql
    assert [r.template for r in model.requests] == ["direct"]


def test_queries_failing_on_a_missing_column_abstain_after_the_fact(concert_db):
    """abstention: rules asks the model nothing before generation; every sample and revision asks for ticket_price."""
    model = ScriptedModel({"direct": "SELECT avg(ticket_price) FROM concert GROUP BY Stadium_ID",
                           "revise": "SELECT avg(T1.ticket_price) FROM concert AS T1"})
    result = ask(TICKETS, str(concert_db), model=model, settings=settings(abstention="rules", max_revisions=2))
    assert result.abstained and result.sql is None and result.error is None
    assert result.answer.startswith("This data has no ticket price")
    assert result.confidence_reasons == ["every query failed asking for ticket_price, which the schema lacks"]
    assert "place_words" not in {r.template for r in model.requests}


def test_without_abstention_a_failure_stays_a_failure(concert_db):
    model = ScriptedModel({"direct": "SELECT avg(ticket_price) FROM concert", "revise": "SELECT avg(ticket_price) FROM concert"})
    result = ask(TICKETS, str(concert_db), model=model, settings=settings(abstention="none", max_revisions=1))
    assert not result.abstained and result.error and result.confidence == "low"
    assert result.confidence_reasons == [f"the query failed: {result.error}"]


# ---- the general unanswerable questions over Spider dev databases --------------------------------------------------

#: Unanswerable questions whose missing column no check before generation can see: "name" is in every schema's words
#: and "delayed" is a verb form; only the failures after the fact can tell.
UNSEEN_BEFORE_GENERATION = {"What is the name of each pet?", "Which flights were delayed by more than an hour?"}


def test_general_unanswerable_questions_name_a_word_the_schema_lacks(spider_root):
    examples, reasons = read_unanswerable(SPIDER_UNANSWERABLE)
    assert len(examples) >= 15 and all(reasons[e.id]["reason"] for e in examples)
    unseen = set()
    for example in examples:
        schema = open_database(str(spider_root / "database" / example.db_id / f"{example.db_id}.sqlite")).schema()
        if not concept_words(coverage(example.question, schema)):
            unseen.add(example.question)
    assert unseen == UNSEEN_BEFORE_GENERATION


def test_general_unanswerable_questions_abstain_when_the_model_places_nothing(spider_root):
    examples, _ = read_unanswerable(SPIDER_UNANSWERABLE)
    model = ScriptedModel({"place_words": lambda request, i: json.dumps(
        {w.strip('"'): "none" for w in request.values["words"].split(", ")})})
    for example in [e for e in examples if e.question not in UNSEEN_BEFORE_GENERATION]:
        db = spider_root / "database" / example.db_id / f"{example.db_id}.sqlite"
        result = ask(example.question, str(db), model=model, settings=settings())
        assert result.abstained and result.answer.startswith("This data has no "), example.question
