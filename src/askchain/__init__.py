"""askchain: answers analytical questions in plain English over relational data.

`ask` and `AskResult` load on first use, so importing askchain (or any module of it) does not load the pipeline,
its models and their libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from askchain.lazy import lazy_exports

if TYPE_CHECKING:
    from askchain.api import ask
    from askchain.pipeline.result import AskResult

__all__ = ["AskResult", "ask"]
__version__ = "0.1.0"

__getattr__ = lazy_exports(__name__, {"ask": "askchain.api", "AskResult": "askchain.pipeline.result"})
