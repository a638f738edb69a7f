"""The answering methods by name. A method is not code of its own: it is the one graph of stages configured by an
entry of `methods:` in settings.yaml, applied over the `pipeline` section, so every method shares the same
generation, revision, selection, empty-answer and answer rules and differs only where its entry says."""

from __future__ import annotations

from askchain.config import Settings
from askchain.errors import ConfigError


def method_settings(settings: Settings, method: str, **pipeline: object) -> Settings:
    """The settings a method runs with: its entry over the pipeline section, then `pipeline` overrides."""
    entry = settings.methods.get(method)
    if entry is None:
        raise ConfigError(f"unknown method '{method}': use one of {', '.join(settings.methods)}")
    configured = settings.with_overrides(pipeline=entry)
    return configured.with_overrides(pipeline=pipeline) if pipeline else configured
