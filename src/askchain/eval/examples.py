"""How close the few-shot examples are to what each question needs, without a model: the SQL of the examples that
retrieval finds for a question against the question's gold SQL.

A query's shape is the set of its tables, columns, functions and clause kinds (joins, grouping, windows, CTEs, set
operations ...); two shapes overlap by their Jaccard similarity. *Best* is the closest of a question's examples (what
the model can copy from), *mean* the average over them. The overlap of the names alone (tables, columns) and of the
form alone (functions, clauses) are reported beside it: an example can name the right data and compute it
differently (a sum where a share is asked), which a small model then copies. Examples are retrieved with the
pipeline's settings and call (skeletons by rules where the whole pool is searched). Examples of the question's own
template family (a question bank row's `family`, in the evaluated file or a domain's example files) are left out as
well as the question itself, as the test split's families are left out by construction: on the pool split, the
figure says how retrieval does for a question of a kind it has not seen.
"""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.config import Settings
from askchain.db.dialects import parse_one
from askchain.errors import ConfigError
from askchain.eval.datasets import Dataset, Example, question_lines

#: Nodes whose presence is part of a query's shape, whatever they hold.
_CLAUSES = (exp.Join, exp.Group, exp.Having, exp.Order, exp.Limit, exp.Window, exp.CTE, exp.Subquery, exp.Case,
            exp.Bracket, exp.SetOperation, exp.Div)


def query_shape(sql: str, dialect: str) -> frozenset[str]:
    """The tables, columns, functions and clause kinds of a query (empty when it does not parse)."""
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return frozenset()
    shape = set()
    for node in tree.walk():
        if isinstance(node, exp.Table):
            shape.add(f"table:{node.name.lower()}")
        elif isinstance(node, exp.Column):
            shape.add(f"column:{node.name.lower()}")
        elif isinstance(node, exp.Anonymous):
            shape.add(f"function:{node.name.upper()}")
        elif isinstance(node, exp.Func):
            shape.add(f"function:{node.sql_name()}")
        elif isinstance(node, _CLAUSES):
            shape.add(f"clause:{type(node).__name__}")
    return frozenset(shape)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


NAMES, FORM = ("table:", "column:"), ("function:", "clause:")


def part(shape: frozenset[str], prefixes: tuple[str, ...]) -> frozenset[str]:
    return frozenset(f for f in shape if f.startswith(prefixes))


@dataclass
class ExampleAudit:
    k: int
    rows: list[dict] = field(default_factory=list)

    @property
    def shown(self) -> list[dict]:
        """The questions that got examples (Spider's and BIRD's databases are held out, so theirs may get none)."""
        return [r for r in self.rows if r["examples"]]

    def average(self, of: str, rows: list[dict] | None = None) -> float | None:
        """The average over questions (those shown examples, or `rows`) of one overlap: best, mean, names or form."""
        rows = self.shown if rows is None else rows
        return mean(r[of] for r in rows) if rows else None

    def by_category(self) -> dict[str, list[dict]]:
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in self.shown:
            groups[row["category"] or "-"].append(row)
        return dict(sorted(groups.items()))


def template_families(dataset: Dataset) -> dict[str, str]:
    """Question -> template family, for every row that names one in the evaluated file and the domains' example
    files (Spider's and BIRD's rows have none)."""
    from askchain.retrieval.examples import domain_sources

    files = {source.questions for source in domain_sources()} | {Path(dataset.source)}
    return {
        row["question"]: row["family"]
        for path in files if path.suffix == ".jsonl" and path.is_file()
        for _, row in question_lines(path) if row.get("family")
    }


def audit_examples(dataset: Dataset, questions: list[Example], families: dict[str, str], settings: Settings) -> ExampleAudit:
    """Each question's examples, found as the pipeline's default method finds them, against its gold SQL. Examples
    of the question's own family in `families` are left out (retrieval drops repeated SQL first: a left-out
    sibling can hide another family's entry with the very same query)."""
    from askchain.pipeline.methods import method_settings
    from askchain.pipeline.stages import example_scope
    from askchain.retrieval.examples import retrieve_examples

    settings = dataset.holding_out(method_settings(settings, settings.pipeline.method))
    k = settings.pipeline.examples_k
    if k <= 0:
        raise ConfigError(f"method {settings.pipeline.method} shows no examples (pipeline.examples_k is {k})")
    siblings = Counter(families.values())
    audit = ExampleAudit(k)
    with contextlib.ExitStack() as stack:
        engines = {}
        for question in questions:
            if question.db_id not in engines:
                engines[question.db_id] = engine = dataset.connect(question.db_id, settings)
                stack.callback(engine.close)
            engine = engines[question.db_id]
            schema, dialect = engine.schema(), engine.query_dialect
            family = families.get(question.question)
            found = retrieve_examples(
                question.question, k + siblings.get(family, 0), exclude_db=question.db_id if question.hold_out_db else None,
                exclude_question=question.question, only_db=example_scope(settings, schema), schema=schema, settings=settings,
            )
            found = [e for e in found if family is None or families.get(e.question) != family][:k]
            gold = query_shape(question.gold_sql, dialect)
            shapes = [query_shape(e.sql, dialect) for e in found]
            scores = [overlap(gold, shape) for shape in shapes]
            audit.rows.append({
                "id": question.id, "category": question.category, "examples": [e.question for e in found],
                "best": max(scores, default=0.0), "mean": mean(scores) if scores else 0.0,
                **{name: max((overlap(part(gold, prefixes), part(shape, prefixes)) for shape in shapes), default=0.0)
                   for name, prefixes in (("names", NAMES), ("form", FORM))},
            })
    return audit


def render_example_audit(audit: ExampleAudit) -> str:
    def figures(rows: list[dict] | None = None) -> str:
        shown = {of: audit.average(of, rows) for of in ("best", "mean", "names", "form")}
        text = {of: "–" if value is None else f"{value:.3f}" for of, value in shown.items()}
        return f"best {text['best']}, mean {text['mean']}, best names {text['names']}, best form {text['form']}"

    lines = [f"{len(audit.rows)} questions, {len(audit.shown)} shown examples (up to {audit.k} each) · gold SQL shape "
             f"overlap: {figures()}"]
    for category, rows in audit.by_category().items():
        lines.append(f"  {category:<14} {len(rows):>4} questions · {figures(rows)}")
    return "\n".join(lines)
