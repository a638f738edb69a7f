"""Pull the SQL out of a model's reply, normalise it for de-duplication, and edit it where the parser found a node."""

from __future__ import annotations

import re
from typing import Collection, NamedTuple

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from askchain.db.dialects import parse_one, parse_statements

_FENCE = re.compile(r"```(?:sql|googlesql|sqlite|duckdb)?\s*\n?(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)
_START = re.compile(r"\b(WITH|SELECT)\b", re.IGNORECASE)
#: Where a reply that asked for a ```sql block can stop: the block's closing fence. Whatever the model writes after
#: it (explanations) costs generation time and is thrown away by `extract_sql`.
END_OF_SQL_BLOCK = ["\n```\n"]


def extract_sql(reply: str) -> str:
    """The one query a reply gives: from its last fenced block (else the whole reply), comments dropped; when the
    model wrote several statements (e.g. one per sub-question before the final one), the last of them."""
    blocks = [b.strip() for b in _FENCE.findall(reply) if b.strip()]
    lines = [_without_comment(line) for line in (blocks[-1] if blocks else reply).splitlines()]
    text = "\n".join(line for line in lines if line.strip())
    # Keep one statement: models sometimes append explanations or a second query after a semicolon.
    if ";" in text and _balanced_quotes(text[: text.index(";")]):
        text = text[: text.index(";")]
    if _parses(text):
        return text.strip()
    statements = _split_statements(lines)
    return statements[-1] if statements else text.strip()


def _without_comment(line: str) -> str:
    """The line up to a `--` comment that is not inside a string literal."""
    at = line.find("--")
    while at != -1:
        if _balanced_quotes(line[:at]):
            return line[:at].rstrip()
        at = line.find("--", at + 2)
    return line


def _split_statements(lines: list[str]) -> list[str]:
    """Statements separated by blank (or comment-only) lines, each starting with SELECT or WITH."""
    statements, current = [], []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line)
            continue
        chunk = "\n".join(current).strip()
        current = []
        match = _START.search(chunk)
        if match:
            statements.append(chunk[match.start():].rstrip(";").strip())
    return statements


def _parses(text: str) -> bool:
    try:
        return len(parse_statements(text)) == 1
    except SqlglotError:
        return False


def _balanced_quotes(text: str) -> bool:
    return text.count("'") % 2 == 0 and text.count('"') % 2 == 0


def normalize_sql(sql: str, dialect: str) -> str:
    """A canonical form for de-duplicating candidates; falls back to whitespace-collapsed text."""
    try:
        tree = parse_one(sql, dialect)
        return tree.sql(dialect=dialect, normalize=True, pretty=False)
    except SqlglotError:
        return " ".join(sql.split()).lower()


#: An edit of SQL text: the first and last character of what it replaces (sqlglot's `meta` span, inclusive), the new
#: text, and the note the trace keeps.
Edit = tuple[int, int, str, str]


def apply_edits(sql: str, edits: list[Edit]) -> tuple[str, list[str]]:
    """`sql` with each edit made (from the end, so earlier spans keep their positions) and the edits' notes in text
    order; the rest stays as written."""
    for start, end, text, _ in sorted(edits, reverse=True):
        sql = sql[:start] + text + sql[end + 1:]
    return sql, [note for *_, note in sorted(edits)]


def condition_span(tokens: list[Token], condition: exp.Expression, anchor: int, dialect: str) -> tuple[int, int] | None:
    """The characters to remove for one of WHERE's ANDed conditions (first and last, inclusive): its tokens as
    written, with the AND before it (or after it, when it comes first) or, alone, its WHERE, from just after the token
    before them; None when its tokens are not found as sqlglot writes it back, in any order (`x IS NOT NULL` is
    written back `NOT x IS NULL`), around the character `anchor` (the start of one of its leaves, from sqlglot's
    `meta`)."""
    written = [(t.token_type, t.text.upper()) for t in Dialect.get_or_raise(dialect).tokenize(condition.sql(dialect))]
    at = next((i for i, t in enumerate(tokens) if t.start <= anchor <= t.end), None)
    if at is None:
        return None
    first = next((i for i in range(max(0, at - len(written) + 1), at + 1)
                  if sorted((t.token_type, t.text.upper()) for t in tokens[i:i + len(written)]) == sorted(written)),
                 None)
    if first is None or first < 2:
        return None
    last = first + len(written) - 1
    before, after = tokens[first - 1].token_type, tokens[last + 1].token_type if last + 1 < len(tokens) else None
    if before in (TokenType.AND, TokenType.WHERE) and after != TokenType.AND:
        return tokens[first - 2].end + 1, tokens[last].end
    if after == TokenType.AND:
        return tokens[first].start, tokens[last + 2].start - 1 if last + 2 < len(tokens) else tokens[last + 1].end
    return None


class Call(NamedTuple):
    """A call of a named function as written: its name (upper case), its position among the tokens, the first
    character of its name and the position of its closing parenthesis, and its arguments (split at top-level commas)."""
    name: str
    index: int
    start: int
    end: int
    arguments: list[str]


def named_calls(sql: str, dialect: str, names: Collection[str]) -> tuple[list[Token], list[Call]]:
    """`sql`'s tokens and its calls of the functions `names` names (upper case), for rules that rewrite such calls
    where they are written; no calls when `sql` names none of them or sqlglot cannot tokenize it. A name that no
    parenthesis follows, or whose parenthesis never closes, is no call."""
    if not names or not any(name in sql.upper() for name in names):
        return [], []
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return [], []
    calls = []
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.VAR and token.text.upper() in names:
            found = _call_arguments(sql, tokens, i)
            if found:
                calls.append(Call(token.text.upper(), i, token.start, found[1], found[0]))
    return tokens, calls


def _call_arguments(sql: str, tokens: list[Token], i: int) -> tuple[list[str], int] | None:
    """The arguments written in the call named by `tokens[i]` (split at its top-level commas) and the position of its
    closing parenthesis; None when no parenthesis follows the name or none closes it."""
    if i + 1 >= len(tokens) or tokens[i + 1].token_type != TokenType.L_PAREN:
        return None
    depth, start, written = 0, tokens[i + 1].end + 1, []
    for token in tokens[i + 1:]:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth == 1 and token.token_type == TokenType.COMMA or depth == 0:
            written.append(sql[start:token.start].strip())
            start = token.end + 1
        if depth == 0:
            return written, token.start
    return None
