import pytest

from askchain.retrieval.masking import literal_spans, mask_question, name_words, schema_phrases

PHRASES = schema_phrases(
    ["department", "head", "management", "Documents"],
    ["Department_ID", "Name", "Budget_in_Billions", "born_state", "age", "eyeColour", "count"],
)


@pytest.mark.parametrize(
    "question, skeleton",
    [
        ("How many heads of the departments are older than 56 ?", "how many <table> of the <table> are older than <number> ?"),
        ("List the name, born state and age of the heads.", "list the <column> , <column> and <column> of the <table> ."),
        ('Find the documents named "How to read a book".', "find the <table> named <value> ."),
        ("Who directed the movie Sex, Drink and Bloodshed?", "who directed the movie <entity> , <entity> ?"),
        ("What is the eye colour of Bruce Wayne's alter ego?", "what is the <column> of <entity> ' s alter ego ?"),
        ("Which players won the U.S. Open in 2019 with 2.5% more?", "which players won the <entity> in <number> with <number> more ?"),
        ("Show the budget in billions of the Bank of America department", "show the <column> of the <entity> <table>"),
        ("What is the count of departments?", "what is the count of <table> ?"),  # structure words stay
        ("Show 1, 2 and 3", "show <number> , <number> and <number>"),
        ("Tell me the Department ID of each head", "tell me the <column> of each <table>"),
    ],
)
def test_skeleton_masks_values_entities_and_names(question, skeleton):
    assert mask_question(question, PHRASES) == skeleton


def test_sentence_initial_capital_is_not_an_entity():
    assert mask_question("Count the heroes. Show Superman's powers") == "count the heroes . show <entity> ' s powers"


def test_consecutive_masks_collapse_only_when_equal():
    assert mask_question("Compare Paris London and 'Rome' 3 4") == "compare <entity> and <value> <number>"


@pytest.mark.parametrize(
    "name, words",
    [("Budget_in_Billions", ("budget", "in", "billion")), ("eyeColour", ("eye", "colour")), ("Countries", ("country",)),
     ("class", ("class",))],
)
def test_name_words(name, words):
    assert name_words(name) == words


def test_literal_spans_are_quoted_text_and_capitalised_spans():
    assert literal_spans('Is "Batman" the alter ego of Bruce Wayne from the Bank of America?') == [
        "Batman", "Bruce Wayne", "Bank of America"
    ]
