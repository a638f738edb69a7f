"""Shorthands: a condition the model writes as one call, expanded to the domain's exact SQL before validation.

A time window is about a fifth of what the 1.5B model writes for an Ethereum question:
`DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()` is ~35
tokens, written again in each of six samples, and each copy can get a boundary wrong. A domain's semantic layer lists
shorthands for such conditions (`LAST_DAYS(block_timestamp, 7)`); prompts show the notes, the examples and the
definitions in the short form (`write_short`), and each sample's calls are expanded where they are written
(`expand_shorthands`), so validation, execution and the user see the full GoogleSQL, which runs anywhere."""

from __future__ import annotations

from dataclasses import dataclass
import re
from functools import cache
from typing import Iterable

from sqlglot.tokens import Token, TokenType

from askchain.generation.sql_text import Edit, apply_edits, named_calls
from askchain.rules.analysis import Analysis
from askchain.rules.base import Repair, Repaired
from askchain.semantic.layer import PLACEHOLDER, SHORTHAND_PARAMETERS, Shorthand

#: Tokens an expansion may follow or precede without parentheses: only AND and OR bind more loosely than what a
#: shorthand stands for, so `NOT LAST_DAYS(...)` or `LAST_DAYS(...) = TRUE` get them.
_OPEN_BEFORE = {TokenType.WHERE, TokenType.AND, TokenType.OR, TokenType.ON, TokenType.HAVING, TokenType.QUALIFY,
                TokenType.WHEN, TokenType.L_PAREN, TokenType.COMMA, TokenType.SELECT}
_OPEN_AFTER = {TokenType.AND, TokenType.OR, TokenType.R_PAREN, TokenType.COMMA, TokenType.THEN, TokenType.ALIAS,
               TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.HAVING, TokenType.QUALIFY,
               TokenType.WINDOW, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.SEMICOLON,
               TokenType.FROM, TokenType.WHERE, TokenType.JOIN, TokenType.ON, TokenType.INNER, TokenType.LEFT,
               TokenType.RIGHT, TokenType.FULL, TokenType.CROSS, TokenType.WHEN, TokenType.ELSE, TokenType.END}
#: A column (or its DATE) compared with what follows, at the end of the text before a call: the model took the call
#: for a date (`block_timestamp >= LAST_DAYS(block_timestamp, 7)`).
#: What binds tighter than AND beside a condition written in full: NOT before it, a comparison on either side.
_TIGHTER_BEFORE = re.compile(r"(?:\bNOT|=|<|>|\bIS)\s*$", re.IGNORECASE)
_TIGHTER_AFTER = re.compile(r"\s*(?:=|<|>|!=|\bIS\b)", re.IGNORECASE)
#: What the model appends to a call it takes for a value that may be missing (`LAST_DAYS(block_timestamp, 30) IS NOT
#: NULL`): on the condition written in full it holds for every row, so the call is read as the condition itself.
_HOLDS_AFTER = re.compile(r"\s*(?:IS\s+NOT\s+NULL|IS\s+TRUE|=\s*TRUE)\b", re.IGNORECASE)
#: A comparison with a date after a call the model took for a date (`DAY_AGO(block_timestamp, 1) = CURRENT_DATE()`):
#: a condition compared with a date cannot run, so the call is read as the condition itself and the date dropped.
_DATE_AFTER = re.compile(r"\s*(?:=|<=|>=|<|>)\s*"
                         r"(?=(?:CURRENT_DATE|CURRENT_TIMESTAMP)\b|(?:DATE|DATE_SUB|DATE_ADD|TIMESTAMP)\s*\()", re.IGNORECASE)
#: Tokens that end an operand outside its own parentheses.
_OPERAND_ENDS = _OPEN_AFTER - {TokenType.R_PAREN}
_COLUMN = SHORTHAND_PARAMETERS["column"]
_COMPARED_COLUMN = re.compile(rf"(?<![\w.`])(?:DATE\s*\(\s*(?P<in_date>{_COLUMN})\s*\)|(?P<column>{_COLUMN}))"
                              r"\s*(?:=|!=|<>|>=|<=|<|>)\s*$", re.IGNORECASE)


def expand_shorthands(sql: str, dialect: str, shorthands: Iterable[Shorthand]) -> tuple[str, list[str]]:
    """`sql` with each shorthand call replaced by what it stands for, and what was expanded ("LAST_DAYS(block_timestamp,
    7) expanded"). A call compared with a column (`block_timestamp >= LAST_DAYS(block_timestamp, 7)`, the call taken
    for a date) is read as the condition on that column, which is the only reading that runs; one the model tests for a
    value (`LAST_DAYS(block_timestamp, 7) IS NOT NULL`, true of every row) or compares with a date
    (`DAY_AGO(block_timestamp, 1) = CURRENT_DATE()`, which cannot run) as the condition itself. A call inside a string
    or with other arguments is left as written (executing it fails, and the error goes to revision)."""
    by_name = {shorthand.name: shorthand for shorthand in shorthands}
    tokens, calls = named_calls(sql, dialect, by_name)
    edits: list[Edit] = []
    for call in calls:
        shorthand, written, end, i = by_name[call.name], call.arguments, call.end, call.index
        parameters = PLACEHOLDER.findall(shorthand.call)
        values = dict(zip(parameters, written))
        compared = _COMPARED_COLUMN.search(sql, 0, call.start)
        start, note = call.start, f"{' '.join(sql[call.start:end + 1].split())} expanded"
        if compared and "column" in values:
            start, values["column"] = compared.start(), compared.group("column") or compared.group("in_date")
            note = f"{' '.join(sql[start:end + 1].split())} read as the condition on {values['column']}"
        if (itself := _end_read_as_the_condition(sql, tokens, end)) is not None:
            end = itself
            note = f"{' '.join(sql[start:end + 1].split())} read as the condition itself"
        if len(written) != len(parameters) or not all(re.fullmatch(SHORTHAND_PARAMETERS[name], value)
                                                   for name, value in values.items()):
            continue
        text = _fill(shorthand.sql, values)
        after = next((t for t in tokens[i + 1:] if t.start > end), None)
        before = next((t for t in reversed(tokens[:i]) if t.end < start), None)
        if not (_is(before, _OPEN_BEFORE) and _is(after, _OPEN_AFTER)):
            text = f"({text})"
        edits.append((start, end, text, note))
    return apply_edits(sql, edits)


def write_short(text: str, shorthands: Iterable[Shorthand]) -> str:
    """`text` (SQL, or notes quoting SQL) with each condition a shorthand stands for written as the call. A number
    may be a capital letter standing for one, as notes write it ("INTERVAL N DAY"). A condition beside NOT or a
    comparison stays whole: there it does not read as one condition (`NOT a AND b` is `(NOT a) AND b`), and its call
    would expand to another query."""
    def short(found: re.Match) -> str:
        if _TIGHTER_BEFORE.search(found.string, 0, found.start()) or _TIGHTER_AFTER.match(found.string, found.end()):
            return found.group(0)
        return _fill(shorthand.call, found.groupdict())

    for shorthand in shorthands:
        text = _written_pattern(shorthand).sub(short, text)
    return text


def _end_read_as_the_condition(sql: str, tokens: list[Token], end: int) -> int | None:
    """Where a call ending at `end` ends once read as the condition itself: with the test for a value or the date
    comparison that follows it; None when neither does."""
    if holds := _HOLDS_AFTER.match(sql, end + 1):
        return holds.end() - 1
    if dated := _DATE_AFTER.match(sql, end + 1):
        return _operand_end(tokens, dated.end())
    return None


def _operand_end(tokens: list[Token], start: int) -> int:
    """Where the operand written from `start` ends: before the first AND, OR, comma, clause, join or CASE branch, or
    unmatched closing parenthesis, outside its own parentheses."""
    depth, end = 0, start
    for token in (t for t in tokens if t.start >= start):
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth < 0 or depth == 0 and token.token_type in _OPERAND_ENDS:
            break
        end = token.end
    return end


def _is(token: Token | None, kinds: set[TokenType]) -> bool:
    return token is None or token.token_type in kinds


def _fill(template: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda p: values[p.group(1)], template)


@cache
def _written_pattern(shorthand: Shorthand) -> re.Pattern:
    return _template_pattern(shorthand.sql, {**SHORTHAND_PARAMETERS, "n": r"\d+|[A-Z]\b"})


def _template_pattern(template: str, parameters: dict[str, str]) -> re.Pattern:
    """A case-insensitive pattern of a template: its text with any spacing around punctuation, each parameter as its
    pattern the first time and as the same text after."""
    pattern, seen = "", set()
    pieces = PLACEHOLDER.split(template)  # literal text, parameter name, literal text, ...
    for literal, name in zip(pieces[::2], [*pieces[1::2], None]):
        for char in literal:
            pattern += r"\s+" if char == " " else (rf"\s*{re.escape(char)}\s*" if char in "(),<>=" else re.escape(char))
        if name:
            pattern += f"(?P={name})" if name in seen else f"(?P<{name}>{parameters[name]})"
            seen.add(name)
    pattern = pattern.replace(r"\s*\s+", r"\s*").replace(r"\s+\s*", r"\s*").replace(r"\s*\s*", r"\s*")
    return re.compile(r"(?<![\w.])" + pattern.removeprefix(r"\s*").removesuffix(r"\s*"), re.IGNORECASE)


@dataclass(frozen=True)
class ExpandShorthands(Repair):
    """A domain's shorthand calls expanded to their SQL (prompts show them; a domain instantiates it with its own)."""

    id = "shorthands"
    order = 50
    shapes_prompts = True
    shorthands: tuple[Shorthand, ...]

    def applies(self, analysis: Analysis) -> bool:
        return bool(self.shorthands)

    def repair(self, analysis: Analysis) -> Repaired:
        return expand_shorthands(analysis.sql, analysis.dialect, self.shorthands)
