"""askchain: answers analytical questions in plain English over relational data.

`ask` and `AskResult` load on first use, so importing askchain (or any module of it) does not load the pipeline,
its models and their libraries.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askchain.api import ask
    from askchain.pipeline.result import AskResult

__all__ = ["AskResult", "ask"]
__version__ = "0.1.0"

_LAZY = {"ask": "askchain.api", "AskResult": "askchain.pipeline.result"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'askchain' has no attribute '{name}'")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
