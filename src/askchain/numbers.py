"""Numbers as people write them in questions and answers: digits, thousands separated by commas, maybe decimals."""

from __future__ import annotations

import re

#: One written number ("1,000", "0.01", "32"); not the digits inside a word or an exponent (`1e18`, `0x40`). A leading
#: minus is not part of it (answers say "fell by 5" as often as "-5").
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w])")


def value_of(written: str) -> float:
    """The number a written number is, its thousands' commas dropped."""
    return float(written.replace(",", ""))


#: Numbers a question writes as words.
NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                "eleven": 11, "twelve": 12, "dozen": 12, "fifteen": 15, "twenty": 20, "fifty": 50, "hundred": 100}
#: A count written in digits or in words ("the past three days"), as a regular expression.
COUNT = r"(?:\d+|" + "|".join(NUMBER_WORDS) + ")"


def as_digits(written: str) -> str:
    """A count written in words as its digits ("three": "3"); anything else as written."""
    return str(NUMBER_WORDS.get(written.lower(), written))


#: Words that leave how many rows to the answer ("a few examples", "the richest addresses"): a LIMIT then is the
#: model's choice, kept; a superlative that only orders the list ("most reused first") asks for every row.
SOME_ROWS = re.compile(r"\b(?:a few|several|some|samples?|examples?|top|most|least|recent|best|worst"
                       r"|(?:larg|bigg|high|low|small|lat|new|old|busi|rich)est)\b(?!(?:\s+[\w-]+)?\s+first\b)",
                       re.IGNORECASE)


def question_numbers(question: str) -> set[float]:
    """The numbers `question` writes, in digits or in words."""
    written = {value_of(number) for number in NUMBER.findall(question)}
    return written | {value for word, value in NUMBER_WORDS.items() if re.search(rf"\b{word}\b", question, re.I)}
