from askchain.db.schema import Column, ForeignKey, Schema, Table


def _schema() -> Schema:
    return Schema([
        Table("a", [Column("id", "INT", primary_key=True), Column("label", "TEXT")], query_name="p.d.a"),
        Table("b", [Column("id", "INT", primary_key=True), Column("a_id", "INT"), Column("x", "TEXT"), Column("y", "TEXT")],
              [ForeignKey(["a_id"], "a", ["id"])]),
    ], "sqlite")


def test_subset_keeps_primary_keys_and_foreign_keys_between_kept_tables():
    sub = _schema().subset({"b": ["X"], "p.d.a": []})  # a query name and an empty list (every column)
    assert [(t.name, [c.name for c in t.columns]) for t in sub.tables] == [("a", ["id", "label"]), ("b", ["id", "a_id", "x"])]
    assert sub.foreign_key_edges() == [("b", "a_id", "a", "id")]


def test_subset_drops_foreign_keys_to_dropped_tables_and_unknown_names():
    sub = _schema().subset({"b": ["y"], "nope": ["z"]})
    assert [(t.name, [c.name for c in t.columns]) for t in sub.tables] == [("b", ["id", "y"])]
    assert sub.foreign_key_edges() == []
