import json

import pytest

from askchain.db import open_database
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.llm.fake import ScriptedModel
from askchain.retrieval.schema import connect_tables, estimate_tokens, link_schema, validate_selection


@pytest.fixture(scope="module")
def superhero(superhero_db) -> Schema:
    return open_database(str(superhero_db)).schema()


def test_link_bridges_tables_and_keeps_join_keys(superhero):
    model = ScriptedModel([json.dumps({"superhero": ["superhero_name"], "superpower": ["power_name"]})])
    link = link_schema("Which powers does Spider-Man have?", superhero, model)
    assert link.columns == {
        # the superhero's own foreign keys stay: a question may ask for them (its publisher_id, say)
        "superhero": ["id", "superhero_name", "gender_id", "eye_colour_id", "hair_colour_id", "skin_colour_id", "race_id",
                      "publisher_id", "alignment_id"],
        "superpower": ["id", "power_name"],
        "hero_power": ["hero_id", "power_id"],  # the bridge on the foreign-key path
    }
    assert sorted(link.joins) == [("hero_power", "hero_id", "superhero", "id"), ("hero_power", "power_id", "superpower", "id")]
    assert not link.fallback
    subset = link.subset(superhero)
    assert [t.name for t in subset.tables] == ["superhero", "superpower", "hero_power"]
    assert "Spider-Man" in model.requests[0].messages[-1][1]  # the question comes last in the prompt


def test_hallucinated_names_are_dropped(superhero):
    model = ScriptedModel([json.dumps({
        "SUPERHERO": ["full_name", "secret_identity", "superhero.height_cm"], "villain": ["name"], "colour": ["shade"],
    })])
    link = link_schema("How tall is Bruce Wayne, and what colour?", superhero, model)
    assert link.columns["superhero"] == ["id", "full_name", "gender_id", "eye_colour_id", "hair_colour_id", "skin_colour_id",
                                         "race_id", "publisher_id", "alignment_id", "height_cm"]
    assert link.columns["colour"] == ["id", "colour"]  # a real table with only made-up columns keeps all of them
    assert "villain" not in link.columns and not link.fallback


@pytest.mark.parametrize("reply", ["not json at all", json.dumps({"villain": ["name"]}), json.dumps(["superhero"])])
def test_unusable_reply_falls_back_to_the_whole_schema(superhero, reply):
    link = link_schema("Anything?", superhero, ScriptedModel([reply]))
    assert link.fallback
    assert link.columns == {t.name: [c.name for c in t.columns] for t in superhero.tables}


def test_join_paths_prefer_the_shortest_and_leave_unreachable_tables_unjoined():
    def table(name, *fks):
        return Table(name, [Column("id", "INT", primary_key=True)] + [Column(f"{r}_id", "INT") for r in fks],
                     [ForeignKey([f"{r}_id"], r, ["id"]) for r in fks])

    schema = Schema([table("a"), table("b", "a"), table("c", "b"), table("d", "c", "a"), table("lonely")], "sqlite")
    assert connect_tables(schema, ["a", "c"]) == {"a", "b", "c"}
    assert connect_tables(schema, ["c", "a", "lonely"]) == {"a", "b", "c", "lonely"}
    assert connect_tables(schema, ["b"]) == {"b"}


def test_linked_tables_keep_their_time_columns():
    """A model that chose blocks.miner must still see blocks.timestamp, or "in the last 30 days" has nothing to filter."""
    schema = Schema([
        Table("blocks", [Column("number", "INT64", primary_key=True), Column("timestamp", "TIMESTAMP"), Column("miner", "STRING"),
                         Column("gas_used", "INT64")]),
        Table("events", [Column("id", "INTEGER"), Column("happened_on", "date"), Column("updated", "DATETIME"),
                         Column("name", "TEXT")]),
    ], "bigquery")
    link = link_schema("Top miners?", schema, ScriptedModel([json.dumps({"blocks": ["miner"], "events": ["name"]})]))
    assert link.columns == {"blocks": ["number", "timestamp", "miner"], "events": ["happened_on", "updated", "name"]}


def test_linked_tables_keep_the_columns_named_like_a_question_word():
    """Of gas_limit and gas_used the 1.5B model kept only gas_limit for "blocks that used more than 15 million gas"."""
    schema = Schema([Table("blocks", [Column("number", "INT64", primary_key=True), Column("miner", "STRING"),
                                      Column("gas_limit", "INT64"), Column("gas_used", "INT64"), Column("size", "INT64")])],
                    "bigquery")
    link = link_schema("How many blocks used more than 15 million gas?", schema,
                       ScriptedModel([json.dumps({"blocks": ["gas_limit"]})]))
    assert link.columns == {"blocks": ["number", "gas_limit", "gas_used"]}


def test_validation_is_case_insensitive_and_deduplicates(superhero):
    assert validate_selection({"Colour": ["COLOUR", "colour.colour"], "colour": ["id"]}, superhero) == {"colour": ["colour", "id"]}


def test_large_schema_is_prefiltered_by_embeddings(superhero):
    pytest.importorskip("sentence_transformers")
    model = ScriptedModel([json.dumps({"superpower": ["power_name"]})])
    budget = estimate_tokens(superhero.light()) // 3
    link = link_schema("List the names of the super powers.", superhero, model, token_budget=budget)
    shown = model.requests[0].messages[-1][1]
    assert "superpower(" in shown and "power_name" in shown
    assert len(shown) < len(superhero.light())  # the model saw a pre-filtered schema
    assert link.columns == {"superpower": ["id", "power_name"]}
