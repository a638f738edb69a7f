"""askchain: answers analytical questions in plain English over relational data."""

from askchain.api import ask
from askchain.pipeline.result import AskResult

__all__ = ["AskResult", "ask"]
__version__ = "0.1.0"
