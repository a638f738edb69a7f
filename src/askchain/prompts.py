"""Prompt templates as Markdown files beside their stage: `## system` and `## user` sections, $placeholders."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from string import Template

from askchain.llm.base import Prompt

_SECTION = re.compile(r"^## (system|user|assistant)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    #: The file's stem (`revise`, `judge`...): unique across packages, so test doubles can script replies by it.
    name: str
    sections: tuple[tuple[str, Template], ...]

    def render(self, **values) -> Prompt:
        """Fill the placeholders; a missing value is a bug in the caller, so it raises KeyError."""
        messages = [{"role": role, "content": tpl.substitute(values).strip()} for role, tpl in self.sections]
        return Prompt(messages, self.name, values)


@lru_cache(maxsize=None)
def load_prompt(package: str, name: str) -> PromptTemplate:
    text = resources.files(package).joinpath("prompts", f"{name}.md").read_text()
    parts = _SECTION.split(text)
    sections = tuple((parts[i], Template(parts[i + 1])) for i in range(1, len(parts), 2))
    if not sections:
        raise ValueError(f"prompt {package}/{name} has no '## system' or '## user' section")
    return PromptTemplate(name, sections)
