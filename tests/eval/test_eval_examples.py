import pytest

from askchain.eval.examples import FORM, NAMES, ExampleAudit, overlap, part, query_shape, render_example_audit


@pytest.mark.parametrize("sql, dialect, shape", [
    ("SELECT COUNT(*) FROM rides WHERE minutes > 3", "duckdb",
     {"table:rides", "column:minutes", "function:COUNT"}),
    ("SELECT DATE(block_timestamp) AS day, SUM(value) / 1e18 FROM `p.d.transactions` GROUP BY day ORDER BY day", "bigquery",
     {"table:transactions", "column:block_timestamp", "column:value", "column:day", "function:DATE", "function:SUM",
      "clause:Div", "clause:Group", "clause:Order"}),
    ("SELECT x, LAG(x) OVER (ORDER BY d) FROM (SELECT 1 AS x, 2 AS d) WHERE x IN UNNEST([1])", "bigquery",
     {"column:x", "column:d", "function:LAG", "function:ARRAY", "function:UNNEST", "clause:Window", "clause:Order", "clause:Subquery"}),
    ("SELECT a FROM t EXCEPT SELECT a FROM u", "sqlite", {"table:t", "table:u", "column:a", "clause:Except"}),
    ("not sql at all (", "sqlite", set()),
])
def test_query_shape(sql, dialect, shape):
    assert query_shape(sql, dialect) == shape


@pytest.mark.parametrize("a, b, expected", [
    ({"t:a", "c:x"}, {"t:a", "c:x"}, 1.0),
    ({"t:a", "c:x"}, {"t:a", "c:y"}, 1 / 3),
    (set(), set(), 0.0),
])
def test_overlap_is_the_jaccard_similarity(a, b, expected):
    assert overlap(frozenset(a), frozenset(b)) == pytest.approx(expected)


def test_a_shape_splits_into_the_names_and_the_form():
    shape = query_shape("SELECT COUNTIF(status = 0) / COUNT(*) FROM traces", "bigquery")
    assert part(shape, NAMES) == {"table:traces", "column:status"}
    assert part(shape, FORM) == {"function:COUNT_IF", "function:COUNT", "clause:Div"}


def test_the_audit_averages_over_the_questions_shown_examples_per_category():
    row = lambda i, category, examples, best, mean_: {  # noqa: E731
        "id": i, "category": category, "examples": examples, "best": best, "mean": mean_, "names": 1.0, "form": best / 2}
    audit = ExampleAudit(k=2, rows=[
        row("a", "fees", ["q1", "q2"], 1.0, 0.5),
        row("b", "fees", ["q3"], 0.5, 0.5),
        row("c", None, ["q4"], 0.0, 0.0),
        row("d", "fees", [], 0.0, 0.0),  # its database held out
    ])
    assert (len(audit.shown), audit.average("best"), audit.average("mean"), audit.average("form")) == (3, 0.5, 1 / 3, 0.25)
    assert {c: audit.average("best", rows) for c, rows in audit.by_category().items()} == {"-": 0.0, "fees": 0.75}
    assert render_example_audit(audit).splitlines()[0] == (
        "4 questions, 3 shown examples (up to 2 each) · gold SQL shape overlap: best 0.500, mean 0.333, "
        "best names 1.000, best form 0.250")
    assert "best –" in render_example_audit(ExampleAudit(k=3))
