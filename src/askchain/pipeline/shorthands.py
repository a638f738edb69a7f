"""Shorthands: a condition the model writes as one call, expanded to the domain's exact SQL before validation.

A time window is about a fifth of what the 1.5B model writes for an Ethereum question:
`DATE(block_timestamp) >= DATE_SUB(CURRENT_DATE(), INTERVAL 7 DAY) AND DATE(block_timestamp) < CURRENT_DATE()` is ~35
tokens, written again in each of six samples, and each copy can get a boundary wrong. A domain's semantic layer lists
shorthands for such conditions (`LAST_DAYS(block_timestamp, 7)`); prompts show the notes, the examples and the
definitions in the short form (`write_short`), and each sample's calls are expanded where they are written
(`expand_shorthands`), so validation, execution and the user see the full GoogleSQL, which runs anywhere."""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from askchain.generation.sql_text import Edit, apply_edits
from askchain.semantic.layer import PLACEHOLDER, SHORTHAND_PARAMETERS, Shorthand

#: Tokens an expansion may follow or precede without parentheses: only AND and OR bind more loosely than what a
#: shorthand stands for, so `NOT LAST_DAYS(...)` or `LAST_DAYS(...) = TRUE` get them.
_OPEN_BEFORE = {TokenType.WHERE, TokenType.AND, TokenType.OR, TokenType.ON, TokenType.HAVING, TokenType.QUALIFY,
                TokenType.WHEN, TokenType.L_PAREN, TokenType.COMMA, TokenType.SELECT}
_OPEN_AFTER = {TokenType.AND, TokenType.OR, TokenType.R_PAREN, TokenType.COMMA, TokenType.THEN, TokenType.ALIAS,
               TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.HAVING, TokenType.QUALIFY,
               TokenType.WINDOW, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.SEMICOLON}


def expand_shorthands(sql: str, dialect: str, shorthands: Iterable[Shorthand]) -> tuple[str, list[str]]:
    """`sql` with each shorthand call replaced by what it stands for, and what was expanded ("LAST_DAYS(block_timestamp,
    7) expanded"); a call inside a string or with other arguments is left as written (executing it fails, and the
    error goes to revision)."""
    by_name = {shorthand.name: shorthand for shorthand in shorthands}
    if not by_name or not any(name in sql.upper() for name in by_name):
        return sql, []
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return sql, []
    edits: list[Edit] = []
    for i, token in enumerate(tokens):
        shorthand = by_name.get(token.text.upper()) if token.token_type == TokenType.VAR else None
        call = _call_pattern(shorthand).match(sql, token.start) if shorthand else None
        if call is None:
            continue
        text = _fill(shorthand.sql, call.groupdict())
        after = next((t for t in tokens[i + 1:] if t.start >= call.end()), None)
        if not (_is(tokens[i - 1] if i else None, _OPEN_BEFORE) and _is(after, _OPEN_AFTER)):
            text = f"({text})"
        edits.append((token.start, call.end() - 1, text, f"{' '.join(call.group(0).split())} expanded"))
    return apply_edits(sql, edits)


def write_short(text: str, shorthands: Iterable[Shorthand]) -> str:
    """`text` (SQL, or notes quoting SQL) with each condition a shorthand stands for written as the call. A number
    may be a capital letter standing for one, as notes write it ("INTERVAL N DAY")."""
    for shorthand in shorthands:
        text = _written_pattern(shorthand).sub(lambda found: _fill(shorthand.call, found.groupdict()), text)
    return text


def _is(token: Token | None, kinds: set[TokenType]) -> bool:
    return token is None or token.token_type in kinds


def _fill(template: str, values: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda p: values[p.group(1)], template)


@cache
def _call_pattern(shorthand: Shorthand) -> re.Pattern:
    return _template_pattern(shorthand.call, SHORTHAND_PARAMETERS)


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
