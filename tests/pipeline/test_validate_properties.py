"""Property-based: validation and the read-only guard judge any SQL and never fail inside.

Fed every gold and train query of Spider and BIRD (against their schemas) and of the Ethereum evaluation set, and
queries generated from them by the edits a model makes: functions around columns, literals on either side of a
comparison, IN lists of expressions, words or columns, nested subqueries, swapped operands, unknown names, joins on
any columns, and text cut short or spliced. `validate_sql` must return findings without an internal failure (a check
that fails inside turns into a "validation step ... failed" warning, which these tests count as a bug), and the guard
must admit the query or refuse it for a reason, not because its own check failed.

Generated queries per run: 2,500 from the Ethereum set (no shared data needed) and 8,000 from Spider and BIRD.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from askchain.config import shared_data_dir
from askchain.db.guard import check_read_only
from askchain.db.schema import Column, ForeignKey, Schema, Table
from askchain.errors import QueryRefused
from askchain.pipeline.validate import Findings, validate_sql

ETHEREUM_QUESTIONS = Path(__file__).resolve().parents[2] / "src/askchain/domains/ethereum/eval/questions.jsonl"
ETHEREUM_EXAMPLES = 2_500
SHARED_EXAMPLES = 8_000

Corpus = list[tuple[Schema, str]]


def judged(sql: str, schema: Schema) -> tuple[Findings, str | None]:
    """The property: findings from validation and a decision from the guard, neither failing inside. Returns the
    findings and the guard's reason to refuse (None when it admits the query)."""
    findings = validate_sql(sql, schema)
    assert isinstance(findings, Findings)
    internal = [w for w in findings.warnings if w.startswith("validation step")]
    assert not internal, f"{sql}\n{internal}"
    try:
        check_read_only(sql, schema.dialect)
    except QueryRefused as exc:
        assert "cannot check the SQL" not in str(exc), f"{sql}\n{exc}"
        return findings, str(exc)
    return findings, None


# ---- corpora -------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def ethereum_corpus() -> Corpus:
    from askchain.domains.ethereum.tables import tables

    schema = Schema([
        Table(spec.name, [Column(c.name, c.type, c.description) for c in spec.columns], description=spec.description,
              query_name=spec.qualified)
        for spec in tables().values()
    ], "bigquery", "crypto_ethereum")
    questions = [json.loads(line) for line in ETHEREUM_QUESTIONS.read_text().splitlines() if line.strip()]
    return [(schema, q["gold_sql"]) for q in questions]


def spider_schema(db: dict, dialect: str = "sqlite") -> Schema:
    """A Spider/BIRD `tables.json` entry as askchain's Schema: its original names, declared types and keys."""
    names = db["table_names_original"]
    tables = [Table(name, []) for name in names]
    keys = {k for pk in db["primary_keys"] for k in (pk if isinstance(pk, list) else [pk])}
    columns = db["column_names_original"]
    for index, ((table, name), kind) in enumerate(zip(columns, db["column_types"])):
        if table >= 0:
            tables[table].columns.append(Column(name, kind, primary_key=index in keys))
    for source, target in db["foreign_keys"]:
        (table, name), (ref_table, ref_name) = columns[source], columns[target]
        tables[table].foreign_keys.append(ForeignKey([name], names[ref_table], [ref_name]))
    return Schema(tables, dialect, db["db_id"])


@lru_cache(maxsize=1)
def shared_corpus() -> Corpus:
    """Spider's and BIRD's queries, each (database, query) once; the tests calling this are marked `shared_data`.
    Not a fixture, so that hypothesis does not print the whole corpus beside a failing example."""
    spider, bird = shared_data_dir() / "spider", shared_data_dir() / "bird"

    def schemas(*files: Path) -> dict[str, Schema]:
        return {db["db_id"]: spider_schema(db) for file in files for db in json.loads(file.read_text())}

    pairs: dict[tuple[str, str], Schema] = {}
    spider_schemas = schemas(spider / "tables.json")
    for q in json.loads((spider / "dev.json").read_text()):
        pairs[q["db_id"], q["query"]] = spider_schemas[q["db_id"]]
    for line in (spider / "train_gold.sql").read_text().splitlines():  # train_spider + train_others: `sql\tdb_id`
        if line.strip():
            sql, db_id = line.rsplit("\t", 1)
            pairs[db_id, sql] = spider_schemas[db_id]
    bird_schemas = schemas(bird / "dev/dev_tables.json", bird / "train/train_tables.json")
    for file in ("dev/dev.json", "train/train_filtered.json", "train/ta_sql_mini_train.json",
                 "minidev/mini_dev_sqlite.json"):
        for q in json.loads((bird / file).read_text()):
            pairs[q["db_id"], q["SQL"]] = bird_schemas[q["db_id"]]
    return [(schema, sql) for (_, sql), schema in pairs.items()]


# ---- mutations: each edits a parsed query the way a model's slip would ----------------------------------------------

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzAEIOU ÉéçßΩ中-'", min_size=1, max_size=12)
NAMES = st.text(alphabet="abcxyzABCXYZ_019 $\"'`[]éΩ中.", min_size=1, max_size=10)
LITERALS = st.one_of(
    WORDS.map(exp.Literal.string),
    st.integers(-10**12, 10**12).map(exp.Literal.number),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: exp.Literal.number(repr(f))),
    st.sampled_from(["32", "1e3", "-0.5", "", " ", "NULL", "2024-01-01"]).map(exp.Literal.string),
    st.builds(exp.null), st.booleans().map(lambda b: exp.Boolean(this=b)),
)
FUNCTIONS = ("LOWER", "UPPER", "TRIM", "LENGTH", "ABS", "ROUND", "MAX", "COUNT", "SUBSTR", "DATE", "COALESCE", "CAST",
             "FOO")
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.In)


def pick(data, items: list):
    """One of `items`, drawn by index: sampled_from would hash every item (whole sqlglot trees, the whole corpus)."""
    return items[data.draw(st.integers(0, len(items) - 1))] if items else None


def operand(data, tree: exp.Expression) -> exp.Expression:
    """A column of the query, a literal, or a function of a column."""
    columns = list(tree.find_all(exp.Column))
    kind = data.draw(st.sampled_from(["column", "literal", "function"] if columns else ["literal"]))
    if kind == "literal":
        return data.draw(LITERALS)
    column = pick(data, columns).copy()
    return wrapped(data, column) if kind == "function" else column


def wrapped(data, node: exp.Expression) -> exp.Expression:
    name = data.draw(st.sampled_from(FUNCTIONS))
    if name == "CAST":
        return exp.cast(node, data.draw(st.sampled_from(["TEXT", "INT", "REAL"])))
    extra = [data.draw(LITERALS)] if name in ("SUBSTR", "COALESCE", "ROUND") else []
    return exp.Anonymous(this=name, expressions=[node, *extra]) if name == "FOO" else exp.func(name, node, *extra)


def wrap_column(tree, data):
    column = pick(data, list(tree.find_all(exp.Column)))
    if column is not None:
        column.replace(wrapped(data, column.copy()))


def literal_on_one_side(tree, data):
    comparison = pick(data, [n for n in tree.find_all(exp.Binary) if isinstance(n, COMPARISONS)])
    if comparison is not None:
        comparison.set(data.draw(st.sampled_from(["this", "expression"])), data.draw(LITERALS))


def swap_operands(tree, data):
    binary = pick(data, list(tree.find_all(exp.Binary)))
    if binary is not None:
        left, right = binary.this, binary.expression
        binary.set("this", right)
        binary.set("expression", left)


def in_list(tree, data):
    """A comparison or condition becomes `x IN (...)`, x and the items being columns, words or expressions."""
    target = pick(data, [n for n in tree.find_all(*COMPARISONS, exp.Column) if n.find_ancestor(exp.Where)])
    if target is None:
        return
    items = [operand(data, tree) for _ in range(data.draw(st.integers(1, 4)))]
    condition = exp.In(this=operand(data, tree), expressions=items)
    target.replace(exp.not_(condition) if data.draw(st.booleans()) else condition)


def nest_subquery(tree, data):
    """The query, or a column in it, moves under a subquery: FROM (...), IN (SELECT ...), EXISTS, a scalar."""
    select = pick(data, list(tree.find_all(exp.Select)))
    if select is None:
        return None
    how = data.draw(st.sampled_from(["from", "in", "exists", "scalar"]))
    if how == "from" and tree is select:
        return exp.select("*").from_(tree.subquery("sub"))
    inner = select.copy()
    column = pick(data, list(select.find_all(exp.Column)))
    if column is None:
        return None
    if how == "in":
        condition = exp.In(this=column.copy(), query=exp.Subquery(this=inner))
    elif how == "exists":
        condition = exp.Exists(this=inner)
    else:
        column.replace(exp.Subquery(this=inner.limit(1)))
        return None
    select.where(condition, copy=False)
    return None


def unknown_name(tree, data):
    node = pick(data, list(tree.find_all(exp.Column, exp.Table, exp.TableAlias)))
    if node is not None:
        node.set("this", exp.to_identifier(data.draw(NAMES)))


def join_any_columns(tree, data):
    columns = list(tree.find_all(exp.Column))
    if not isinstance(tree, exp.Select) or not columns:
        return
    table = pick(data, list(tree.find_all(exp.Table)))
    if table is not None:
        on = exp.EQ(this=pick(data, columns).copy(), expression=exp.column(data.draw(NAMES), table="j"))
        joined = table.copy()  # not re-parsed from its SQL: an earlier mutation may have given it a name like "."
        joined.set("alias", exp.TableAlias(this=exp.to_identifier("j")))
        tree.join(joined, on=on, copy=False)


TREE_MUTATIONS = [wrap_column, literal_on_one_side, swap_operands, in_list, nest_subquery, unknown_name,
                  join_any_columns]
SPLICES = ["(", ")", ",", ";", "'", '"', "`", "--", "/*", " SELECT ", " JOIN ", " IN ", " WHERE ", "; DROP TABLE x",
           " UNION SELECT 1", "\\", "\n", "\x00"]


@lru_cache(maxsize=256)  # the Ethereum set's queries are drawn again and again; parse each once
def parsed(sql: str, dialect: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None


def mutated(data, sql: str, dialect: str) -> str:
    """One to three tree edits, sometimes followed by a text cut or splice (for the parser's paths)."""
    tree = parsed(sql, dialect)
    if tree is not None:
        tree = tree.copy()
        for _ in range(data.draw(st.integers(1, 3))):
            mutation = data.draw(st.sampled_from(TREE_MUTATIONS))
            tree = mutation(tree, data) or tree
        sql = tree.sql(dialect=dialect)
    edit = data.draw(st.sampled_from(["none", "none", "cut", "splice"]))
    if edit != "none" and sql:
        at = data.draw(st.integers(0, len(sql)))
        sql = sql[:at] if edit == "cut" else sql[:at] + data.draw(st.sampled_from(SPLICES)) + sql[at:]
    return sql


def generated(examples: int):
    """Settings for a generated-query test: derandomized so CI sees the same queries, no example database."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---- tests without shared data: the Ethereum evaluation set ---------------------------------------------------------

@pytest.mark.parametrize("index", range(len(ethereum_corpus())))
def test_ethereum_gold_queries_are_judged_and_admitted(index):
    schema, sql = ethereum_corpus()[index]
    findings, refused = judged(sql, schema)
    assert findings.ok, f"{sql}\n{findings}"  # gold queries name only real tables and columns
    assert refused is None


@pytest.mark.slow
@generated(ETHEREUM_EXAMPLES)
@given(data=st.data())
def test_mutated_ethereum_queries_are_judged(data):
    schema, sql = pick(data, ethereum_corpus())
    judged(mutated(data, sql, schema.dialect), schema)


# ---- tests with shared data: Spider and BIRD ------------------------------------------------------------------------

@pytest.mark.shared_data
@pytest.mark.slow
def test_every_spider_and_bird_query_is_judged_and_admitted():
    corpus = shared_corpus()
    refused = [(sql, reason) for schema, sql in corpus if (reason := judged(sql, schema)[1])]
    assert len(corpus) > 13_000  # distinct (database, query) pairs
    assert not refused, refused[:5]  # every gold query reads: the guard admits them all


@pytest.mark.shared_data
@pytest.mark.slow
@generated(SHARED_EXAMPLES)
@given(data=st.data())
def test_mutated_spider_and_bird_queries_are_judged(data):
    schema, sql = pick(data, shared_corpus())
    judged(mutated(data, sql, schema.dialect), schema)
