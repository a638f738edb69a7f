"""What a question says about how many rows it wants, as askchain.generation.semantic_fit reads it (the rule that
drops a LIMIT the question never asked for is askchain.rules.repairs.unasked_limit; both read askchain.numbers)."""

from askchain.numbers import SOME_ROWS, question_numbers

__all__ = ["SOME_ROWS", "question_numbers"]
