"""Every candidate generator by its name in the settings: the free-SQL ones and the semantic one."""

from __future__ import annotations

from typing import Callable

from askchain.generation.candidates import SQL_GENERATORS
from askchain.generation.semantic import semantic

GENERATORS: dict[str, Callable] = {"semantic": semantic, **SQL_GENERATORS}
