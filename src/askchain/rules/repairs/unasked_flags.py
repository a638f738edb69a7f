"""A condition on a flag no word of the question names is taken out of WHERE: "how much ETH did transactions move"
asks about every transaction, not the successful ones.

A 1.5B model narrows rows by habit to a kind it saw in examples (`receipt_status = 1`, `is_erc20`, `to_address IS
NOT NULL`), and the samples that share the habit outvote the ones that answer the question, the governed query's
among them. A flag column is one the domain's semantic model makes a true/false dimension of or counts a condition
on (askchain.semantic.governed.naming.flag_columns), with the phrases that name it ("successful", "ERC-20", "top-level",
"deployed"). A WHERE condition that only tests such a column as the model does (for NULL, or against a number or a
truth value), on a question holding none of its phrases word for word, is dropped where it is written; a comparison with text (an address) is
the question's own value and stays, as do conditions inside a CASE, a join or an aggregate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from askchain.db.schema import Schema
from askchain.rules.analysis import Analysis, readable, schema_column_name, scope_tables
from askchain.rules.base import Repair, Repaired
from askchain.rules.repairs.where_conditions import drop_conditions
from askchain.rules.sql import condition_key, conjuncts
from askchain.semantic.governed.naming import Flag, names_phrase, phrase_words

#: "table.column" (lower case) -> the flag: the phrases that name it, how the model tests it
Flags = Mapping[str, Flag]


def drop_unasked_flags(sql: str, schema: Schema, question: str, flags: Flags,
                       tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` without its WHERE conditions on a flag the question never names (see above), and what was dropped; `sql`
    unchanged (and no notes) when there is none, sqlglot cannot read it or a condition is not found as written.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    dialect = schema.dialect
    tree = readable(sql, dialect, tree)
    if tree is None or not flags:
        return sql, []
    try:
        scopes = traverse_scope(tree)
    except SqlglotError:
        return sql, []
    asked = phrase_words(question)
    selects = list(tree.find_all(exp.Select))
    notes: list[str] = []
    for scope in scopes:
        where = scope.expression.args.get("where") if isinstance(scope.expression, exp.Select) else None
        if where is None:
            continue
        tables = scope_tables(scope, schema)
        unasked = [condition for condition in conjuncts(where.this) if _unasked(condition, tables, flags, asked)]
        if not unasked:
            continue
        at = next(i for i, select in enumerate(selects) if select is scope.expression)
        dropped = drop_conditions(sql, dialect, at, [condition_key(c, dialect) for c in unasked],
                                  lambda condition: f"dropped WHERE's {condition}: no word of the question asks "
                                                    "for only those rows")
        if dropped is None:
            return sql, []
        sql, found = dropped
        notes += found
    return sql, notes


def _unasked(condition: exp.Expression, tables: dict, flags: Flags, asked: tuple[str, ...]) -> bool:
    """Whether a condition tests one flag column as the model tests it (see `_flag_tested`), and no phrase of the
    question's words `asked` names the flag."""
    tested = _flag_tested(condition, tables)
    flag = flags.get(tested[0]) if tested else None
    return flag is not None and (flag.null_test if tested[1] else flag.value_test) \
        and not names_phrase(flag.phrases, asked)


def _flag_tested(condition: exp.Expression, tables: dict) -> tuple[str, bool] | None:
    """"table.column" of the one schema column a condition tests as a flag, and whether it tests it for NULL: the
    column alone or negated, or compared (=, !=, IS) with a number, a truth value or NULL; None for any other."""
    condition = condition.unnest()
    if isinstance(condition, exp.Not):
        condition = condition.this.unnest()
    null_test = False
    if isinstance(condition, (exp.EQ, exp.NEQ, exp.Is)):
        sides = [(condition.this, condition.expression), (condition.expression, condition.this)]
        column, other = next(((column, other) for column, other in sides if isinstance(column, exp.Column) and (
            isinstance(other, (exp.Null, exp.Boolean)) or isinstance(other, exp.Literal) and other.is_number)),
            (None, None))
        condition, null_test = column, isinstance(other, exp.Null)
    name = schema_column_name(condition, tables) if isinstance(condition, exp.Column) else None
    return (name, null_test) if name else None


@dataclass(frozen=True)
class UnaskedFlags(Repair):
    """A WHERE condition on a flag no word of the question names, dropped."""

    flags: Flags
    id = "unasked_flags"
    order = 35

    def applies(self, analysis: Analysis) -> bool:
        return bool(self.flags)

    def repair(self, analysis: Analysis) -> Repaired:
        return drop_unasked_flags(analysis.sql, analysis.schema, analysis.asked, self.flags,
                                  analysis.parsed_or_none(analysis.dialect))
