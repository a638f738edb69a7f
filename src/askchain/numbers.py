"""Numbers as people write them in questions and answers: digits, thousands separated by commas, maybe decimals."""

from __future__ import annotations

import re

#: One written number ("1,000", "0.01", "32"); not the digits inside a word or an exponent (`1e18`, `0x40`). A leading
#: minus is not part of it (answers say "fell by 5" as often as "-5").
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w])")


def value_of(written: str) -> float:
    """The number a written number is, its thousands' commas dropped."""
    return float(written.replace(",", ""))
