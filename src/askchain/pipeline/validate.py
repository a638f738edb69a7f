"""Static checks before execution: parse, hallucinated tables/columns/functions, joins off the key graph,
aggregates mixed with plain columns, one expression under two names, a number column compared with words,
SELECT *. Errors send a candidate to revision instead of the database."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.schema import MappingSchema

from askchain.db.schema import Schema


@dataclass
class Findings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        return "; ".join(self.errors + self.warnings)


# Dialects that reject a non-aggregated column beside an aggregate without GROUP BY (SQLite accepts it).
STRICT_GROUP_BY = {"bigquery", "postgres", "duckdb"}


def sqlglot_schema(schema: Schema) -> MappingSchema:
    """The schema as sqlglot's nested mapping, keyed by the names queries use (qualified where they are)."""
    mapping: dict = {}
    for table in schema.tables:
        columns = {c.name: "UNKNOWN" for c in table.columns}
        parts = table.display_name.split(".")
        node = mapping
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = columns
    depth = max(len(t.display_name.split(".")) for t in schema.tables) if schema.tables else 1
    if any(len(t.display_name.split(".")) != depth for t in schema.tables):
        mapping = {t.name: {c.name: "UNKNOWN" for c in t.columns} for t in schema.tables}
    return MappingSchema(mapping, dialect=schema.dialect, normalize=schema.dialect != "bigquery")


def validate_sql(sql: str, schema: Schema, known_functions: set[str] | None = None) -> Findings:
    findings = Findings()
    dialect = schema.dialect
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError as exc:
        findings.errors.append(f"syntax error: {str(exc).splitlines()[0]}")
        return findings
    if tree is None:
        findings.errors.append("empty query")
        return findings

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        name = ".".join(p.name for p in table.parts)
        if table.name.lower() not in ctes and schema.table(name) is None:
            findings.errors.append(f"table {name} does not exist" + _did_you_mean(table.name, [t.name for t in schema.tables]))
    if findings.errors:
        return findings

    try:
        qualify(tree.copy(), schema=sqlglot_schema(schema), dialect=dialect, validate_qualify_columns=True,
                quote_identifiers=False, identify=False)
    except OptimizeError as exc:
        findings.errors.append(_unresolved_column(str(exc), tree, schema))
    except SqlglotError:
        pass  # qualification is best effort on constructs sqlglot cannot resolve

    if known_functions is not None:
        for func in tree.find_all(exp.Anonymous):
            if func.name.lower() not in known_functions:
                findings.errors.append(f"function {func.name}() does not exist")

    _check_aggregates(tree, dialect, findings)
    _check_repeated_expressions(tree, dialect, findings)
    _check_text_against_numbers(tree, schema, findings)
    _check_joins(tree, schema, findings)
    if any(isinstance(s, exp.Star) for s in (tree.selects if isinstance(tree, exp.Select) else [])):
        findings.warnings.append("SELECT * returns every column; select only the columns asked for")
    return findings


UNRESOLVED_COLUMN = re.compile(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)")


def _unresolved_column(message: str, tree: exp.Expression, schema: Schema) -> str:
    """sqlglot's bare "could not be resolved", told the way a reviser can act on: the tables of the SELECT that
    lack the column and their closest columns (a small model often puts a column in the wrong table, e.g.
    `block_timestamp` in blocks, whose time column is `timestamp`). Only when no column there is close does it
    name the tables that have it: pointing at them makes the reviser join a table the question does not need."""
    found = UNRESOLVED_COLUMN.search(message)
    if not found:
        return message.splitlines()[0].split(". Line:")[0]
    wanted = (found.group(1) or found.group(2)).lower()
    name, lacking = wanted, {}
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for column in scope.columns:
            if column.name.lower() != wanted:
                continue
            name = column.name  # as the query spells it, not normalised
            searched = [tables.get(column.table.lower())] if column.table else list(tables.values())
            searched = [t for t in searched if t is not None]
            if searched and all(t.column(wanted) is None for t in searched):
                lacking.update({t.name: t for t in searched})
    text = f"Column '{name}' does not exist"
    if not lacking:
        return text
    text += " in " + ", ".join(lacking)
    close = _did_you_mean(name, [c.name for t in lacking.values() for c in t.columns])
    owners = [t.name for t in schema.tables if t.column(wanted) is not None]
    if close or not owners:
        return text + close
    return text + f" ({name} is a column of {', '.join(owners[:3])})"


def _scope_tables(scope, schema: Schema) -> dict:
    """The schema tables a query scope reads, by lower-cased alias (tables the schema lacks are left out)."""
    tables = {alias.lower(): schema.table(".".join(p.name for p in source.parts))
              for alias, source in scope.sources.items() if isinstance(source, exp.Table)}
    return {alias: table for alias, table in tables.items() if table is not None}


def _did_you_mean(name: str, choices: list[str]) -> str:
    """Close spellings, and names contained in each other (`timestamp` for `block_timestamp`)."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    close += [c for c in lowered if len(c) > 2 and (c in name.lower() or name.lower() in c) and c not in close]
    return f"; did you mean {', '.join(lowered[c] for c in close[:3])}?" if close else ""


def _check_aggregates(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    for select in tree.find_all(exp.Select):
        if select.args.get("group"):
            continue
        projections = select.expressions
        has_agg = any(p.find(exp.AggFunc) and not p.find(exp.Window) for p in projections)
        plain = [p for p in projections if not p.find(exp.AggFunc) and p.find(exp.Column)]
        if has_agg and plain:
            message = f"aggregate beside non-aggregated {plain[0].sql(dialect=dialect)} without GROUP BY"
            (findings.errors if dialect in STRICT_GROUP_BY else findings.warnings).append(message)


def _check_repeated_expressions(tree: exp.Expression, dialect: str, findings: Findings) -> None:
    """Two output columns named differently but computing the same thing (`COUNT(*) AS above, COUNT(*) AS below`):
    the query meant two quantities and computes one twice, so its rows look plausible and can still win a vote."""
    for select in tree.find_all(exp.Select):
        named: dict[str, str] = {}
        for projection in select.expressions:
            if not isinstance(projection, exp.Alias):
                continue
            expression = projection.this.sql(dialect=dialect)
            first = named.setdefault(expression, projection.alias)
            if first.lower() != projection.alias.lower():
                findings.errors.append(f"columns {first} and {projection.alias} both compute {expression}: "
                                       "make each compute what its name says")
                break


NUMERIC_TYPE = re.compile(
    r"^(?:(?:tiny|small|medium|big|huge|u)?int(?:eger|\d+)?|real|float\d*|double|numeric|bignumeric|decimal|number)\b",
    re.IGNORECASE,
)
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In)


def _check_text_against_numbers(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    """A number column compared with a word (`flights.Airline = 'United Airlines'`, where Airline is the airline's
    id): the query runs and finds nothing, or everything, so it is sent back with the text columns of that name."""
    for scope in traverse_scope(tree):
        tables = _scope_tables(scope, schema)
        for comparison in scope.expression.find_all(*COMPARISONS):
            if comparison.find_ancestor(exp.Select) is not scope.expression:
                continue  # a nested query's comparisons belong to its own scope
            column = comparison.this if isinstance(comparison, exp.In) else comparison.left
            others = comparison.expressions if isinstance(comparison, exp.In) else [comparison.right]
            if not isinstance(column, exp.Column):
                column, others = comparison.right, [comparison.left]
            words = [o.this for o in others if isinstance(o, exp.Literal) and o.is_string and _is_word(o.this)]
            if not isinstance(column, exp.Column) or not words:
                continue
            owners = [tables.get(column.table.lower())] if column.table else list(tables.values())
            found = [(t, t.column(column.name)) for t in owners if t is not None and t.column(column.name) is not None]
            if len(found) != 1 or not NUMERIC_TYPE.match(found[0][1].type or ""):
                continue
            table, col = found[0]
            text_columns = [(t, c) for t in schema.tables for c in t.columns
                            if c.name.lower() == col.name.lower() and not NUMERIC_TYPE.match(c.type or "")]
            hint = ""
            if text_columns:
                other, text_column = text_columns[0]
                joined = {t.name.lower() for t in tables.values()}
                hint = (f"; filter on {other.name}.{text_column.name} instead"
                        + ("" if other.name.lower() in joined else f" (join {other.name})"))
            findings.errors.append(f"{table.name}.{col.name} holds numbers ({col.type}), not text like '{words[0]}'{hint}")
            return  # one such finding is enough to send the query back


def _is_word(text: str) -> bool:
    """Text a number never equals: it has letters and is not itself a number (`'1e3'`)."""
    try:
        float(text)
    except ValueError:
        return any(ch.isalpha() for ch in text)
    return False


def _check_joins(tree: exp.Expression, schema: Schema, findings: Findings) -> None:
    edges = schema.foreign_key_edges()
    if not edges:
        return
    known = {frozenset({(a.lower(), b.lower()), (c.lower(), d.lower())}) for a, b, c, d in edges}
    aliases = {}
    for table in tree.find_all(exp.Table):
        aliases[table.alias_or_name.lower()] = table.name.lower()
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if on is None:
            continue
        for eq in on.find_all(exp.EQ):
            left, right = eq.left, eq.right
            if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                continue
            a = (aliases.get(left.table.lower(), left.table.lower()), left.name.lower())
            b = (aliases.get(right.table.lower(), right.table.lower()), right.name.lower())
            if a[0] and b[0] and frozenset({a, b}) not in known and a[1] != b[1]:
                findings.warnings.append(f"join {a[0]}.{a[1]} = {b[0]}.{b[1]} is not on a foreign key")
