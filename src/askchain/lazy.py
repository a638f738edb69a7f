"""Package names that load on first use: importing a package must not load what only some of its users need."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `exports` imported from its module on first use and kept
    in the package, so later lookups are plain attribute reads."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(import_module(exports[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
