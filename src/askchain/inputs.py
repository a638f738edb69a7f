"""Checks of what people type or send, shared by the CLI, the HTTP API and the MCP tools, so each refuses the same
bad input with the same one-line reason before any work starts (exit code 2, a 422, a tool error)."""

from __future__ import annotations

from typing import Any

from askchain.errors import AskchainError


class InvalidInput(AskchainError, ValueError):
    """Input refused as it arrives. An AskchainError, so the CLI prints one line and exits 2; a ValueError, so a
    pydantic request model raising it reports a validation error (422), not a server error."""


def utf8_text(text: str, what: str) -> str:
    """`text` if it can be written as UTF-8, else InvalidInput naming the first bad character.

    Python reads the invalid bytes of a command-line argument as lone surrogates, and JSON can spell one as a
    `\\ud800` escape: databases, models and files refuse such text only later, mid-work, with an encoder's error.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{what} is not valid UTF-8: {_character(text[exc.start])} at character {exc.start + 1}") from None
    return text


def utf8_data(data: Any, what: str = "the request") -> Any:
    """`data` (parsed JSON: dicts, lists, strings, numbers) if every string in it, keys too, is UTF-8 text."""
    if isinstance(data, str):
        utf8_text(data, what)
    elif isinstance(data, dict):
        for key, value in data.items():
            utf8_data(key, what)
            utf8_data(value, what)
    elif isinstance(data, (list, tuple)):
        for item in data:
            utf8_data(item, what)
    return data


def _character(char: str) -> str:
    """A character text cannot hold, as a person would look for it: the byte it was read from, or its code point."""
    code = ord(char)
    return f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"a lone surrogate U+{code:04X}"
