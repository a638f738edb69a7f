"""A condition on a flag no word of the question names is taken out of WHERE: "how much ETH did transactions move"
asks about every transaction, not the successful ones.

A 1.5B model narrows rows by habit to a kind it saw in examples (`receipt_status = 1`, `is_erc20`, `to_address IS
NOT NULL`), and the samples that share the habit outvote the ones that answer the question, the governed query's
among them. A flag column is one the domain's semantic model makes a true/false dimension of or counts a condition
on (askchain.semantic.governed.naming.flag_columns), with the phrases that name it ("successful", "ERC-20", "top-level",
"deployed"). A WHERE condition that only tests such a column as the model does (for NULL, or against a number or a
truth value; a lookup of a value among a flag column's, `address IN (SELECT address FROM contracts)`, tests a join
for NULL), on a question holding none of its phrases word for word, is dropped where it is written; a comparison
with text (an address) is the question's own value and stays, as do conditions inside a CASE, a join or an
aggregate."""

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
#: Conditions dropped from one query at most: each pass reads the text the one before left.
_MOST_DROPPED = 8


def drop_unasked_flags(sql: str, schema: Schema, question: str, flags: Flags,
                       tree: exp.Expression | None = None) -> tuple[str, list[str]]:
    """`sql` without its WHERE conditions on a flag the question never names (see above), and what was dropped; `sql`
    as the conditions found as written left it (and no more notes) where sqlglot cannot read it or a condition is
    not found as written. One condition is dropped at a time, innermost first, so that a subquery left without its
    own conditions (`IN (SELECT address FROM contracts WHERE is_erc20)`) is read again as a flag test itself.
    `tree` is `sql` parsed, where the caller has it (the candidate's Analysis; read, never changed)."""
    if not flags:
        return sql, []
    asked, notes = phrase_words(question), []
    for _ in range(_MOST_DROPPED):
        found = _first_unasked(sql, schema, flags, asked, tree)
        dropped = drop_conditions(sql, schema.dialect, *found, lambda condition: (
            f"dropped WHERE's {condition}: no word of the question asks for only those rows")) if found else None
        if dropped is None:
            break
        (sql, note), tree = dropped, None
        notes += note
    return sql, notes


def _first_unasked(sql: str, schema: Schema, flags: Flags, asked: tuple[str, ...],
                   tree: exp.Expression | None) -> tuple[int, list[str]] | None:
    """The position of the SELECT (among the query's, in order) whose WHERE holds the innermost unasked flag test,
    with that condition's key (`condition_key`); None where there is none or sqlglot cannot read the query."""
    tree = readable(sql, schema.dialect, tree)
    try:
        scopes = traverse_scope(tree) if tree is not None else []
    except SqlglotError:
        return None
    selects = list(tree.find_all(exp.Select)) if tree is not None else []
    for scope in scopes:
        where = scope.expression.args.get("where") if isinstance(scope.expression, exp.Select) else None
        if where is None:
            continue
        tables = scope_tables(scope, schema)
        unasked = next((c for c in conjuncts(where.this) if _unasked(c, tables, schema, flags, asked)), None)
        if unasked is not None:
            at = next(i for i, select in enumerate(selects) if select is scope.expression)
            return at, [condition_key(unasked, schema.dialect)]
    return None


def _unasked(condition: exp.Expression, tables: dict, schema: Schema, flags: Flags, asked: tuple[str, ...]) -> bool:
    """Whether a condition tests one flag column as the model tests it (see `_flag_tested`), and no phrase of the
    question's words `asked` names the flag."""
    tested = _flag_tested(condition, tables, schema)
    flag = flags.get(tested[0]) if tested else None
    return flag is not None and (flag.null_test if tested[1] else flag.value_test) \
        and not names_phrase(flag.phrases, asked)


def _flag_tested(condition: exp.Expression, tables: dict, schema: Schema) -> tuple[str, bool] | None:
    """"table.column" of the one schema column a condition tests as a flag, and whether it tests it for NULL: the
    column alone or negated, compared (=, !=, IS) with a number, a truth value or NULL, or looked up in a subquery
    that selects a column of one table and nothing else (`IN (SELECT address FROM contracts)`: whether the address
    is a contract, a test for NULL after a join); None for any other."""
    condition = condition.unnest()
    if isinstance(condition, exp.Not):
        condition = condition.this.unnest()
    if isinstance(condition, exp.In) and isinstance(condition.args.get("query"), exp.Expression):
        name = _looked_up(condition.args["query"].unnest(), schema)
        return (name, True) if name else None
    null_test = False
    if isinstance(condition, (exp.EQ, exp.NEQ, exp.Is)):
        sides = [(condition.this, condition.expression), (condition.expression, condition.this)]
        column, other = next(((column, other) for column, other in sides if isinstance(column, exp.Column) and (
            isinstance(other, (exp.Null, exp.Boolean)) or isinstance(other, exp.Literal) and other.is_number)),
            (None, None))
        condition, null_test = column, isinstance(other, exp.Null)
    name = schema_column_name(condition, tables) if isinstance(condition, exp.Column) else None
    return (name, null_test) if name else None


def _looked_up(query: exp.Expression, schema: Schema) -> str | None:
    """"table.column" a subquery selects where it selects one column of one schema table, with no join, filter,
    grouping or limit: the set of that column's values."""
    if not isinstance(query, exp.Select) or len(query.expressions) != 1 or any(
            query.args.get(key) for key in ("joins", "where", "group", "having", "limit")):
        return None
    source = query.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table):
        return None
    found = schema.table(".".join(part.name for part in table.parts))
    return schema_column_name(query.expressions[0].unalias(), {table.alias_or_name.lower(): found} if found else {})


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
