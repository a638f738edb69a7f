"""How good the value hints are, without a model: each question's hints against the string literals of its gold SQL.

A hint is relevant when its value is a literal the gold query compares with (case aside; a LIKE pattern's text
inside the value counts). Precision is the share of hints that are relevant: an irrelevant hint is not harmless, a
small model tends to add a filter on it. Coverage is the share of questions whose gold SQL has a literal that got
at least one relevant hint.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.config import Settings
from askchain.db.dialects import parse_one
from askchain.eval.datasets import Dataset, Example
from askchain.retrieval.values import load_value_index, retrieve_values


def gold_literals(sql: str, dialect: str) -> set[str]:
    """String literals of the gold query, casefolded, LIKE wildcards stripped; SQLite's "double-quoted" strings too."""
    try:
        tree = parse_one(sql, dialect)
    except SqlglotError:
        return set()
    found = {lit.this.strip("%").casefold() for lit in tree.find_all(exp.Literal) if lit.is_string}
    found |= {c.name.casefold() for c in tree.find_all(exp.Column) if c.this.args.get("quoted") and not c.table}
    return {text for text in found if text}


def hint_value(hint: str) -> str:
    """`table.column = 'It''s'` -> `it's`."""
    return hint.split(" = '", 1)[1][:-1].replace("''", "'").strip().casefold()


def relevant(value: str, literals: set[str]) -> bool:
    return any(value == lit or (len(lit) > 2 and lit in value) for lit in literals)


@dataclass
class ValueAudit:
    questions: int = 0
    hints: int = 0
    relevant_hints: int = 0
    questions_with_hints: int = 0
    questions_with_literals: int = 0
    covered: int = 0
    rows: list[dict] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.relevant_hints / self.hints if self.hints else None

    @property
    def coverage(self) -> float | None:
        return self.covered / self.questions_with_literals if self.questions_with_literals else None

    def add(self, example: Example, hints: list[str], literals: set[str]) -> None:
        good = [h for h in hints if relevant(hint_value(h), literals)]
        self.questions += 1
        self.hints += len(hints)
        self.relevant_hints += len(good)
        self.questions_with_hints += bool(hints)
        self.questions_with_literals += bool(literals)
        self.covered += bool(literals and good)
        self.rows.append({"id": example.id, "question": example.question, "literals": sorted(literals),
                          "hints": hints, "relevant": good})

    def as_dict(self) -> dict:
        return {**asdict(self), "precision": self.precision, "coverage": self.coverage}


def audit_values(dataset: Dataset, examples: list[Example], settings: Settings) -> ValueAudit:
    audit, engines = ValueAudit(), {}
    for example in examples:
        if example.db_id not in engines:
            engine = dataset.connect(example.db_id, settings)
            engines[example.db_id] = engine, load_value_index(engine, settings)
        engine, index = engines[example.db_id]
        hints = retrieve_values(example.question, index, engine.schema(), hint=example.hint)
        audit.add(example, hints, gold_literals(example.gold_sql, engine.query_dialect))
    return audit


def render_value_audit(audit: ValueAudit) -> str:
    pct = lambda v: "–" if v is None else f"{100 * v:.1f} %"  # noqa: E731
    return (
        f"{audit.questions} questions · {audit.hints} hints on {audit.questions_with_hints} questions · "
        f"relevant {audit.relevant_hints} (precision {pct(audit.precision)}) · gold literals hinted on "
        f"{audit.covered} of {audit.questions_with_literals} questions (coverage {pct(audit.coverage)})"
    )
