"""Turn a model name from settings or flags into a ChatModel; which names exist is data (models.yaml)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from askchain.config import Settings, get_settings
from askchain.errors import ConfigError
from askchain.llm.base import ChatModel
from askchain.llm.cache import ResponseCache
from askchain.llm.embedded import EmbeddedWeights

PROVIDERS = ("llamacpp", "openai", "anthropic", "gemini")


@lru_cache(maxsize=1)
def named_models() -> dict[str, dict]:
    return yaml.safe_load(Path(__file__).with_name("models.yaml").read_text())


@lru_cache(maxsize=8)
def _response_cache(path: Path) -> ResponseCache:
    return ResponseCache(path)


def get_model(name: str | None = None, settings: Settings | None = None) -> ChatModel:
    """Resolve `name` (default: settings.llm.model) to a ready model with the response cache attached."""
    settings = settings or get_settings()
    name = name or settings.llm.model
    cache = _response_cache(settings.paths.cache("llm_responses.sqlite")) if settings.llm.cache else None
    return _build(name, settings, cache)


def _build(name: str, settings: Settings, cache) -> ChatModel:
    from askchain.llm.llamacpp import LlamaCppModel

    spec = named_models().get(name)
    if spec:
        weights = EmbeddedWeights(**spec["embedded"])
        path = weights.assemble(settings.paths.models())
        context = settings.llm.context_tokens or spec["context_tokens"]
        return LlamaCppModel(
            path, name=name, context_tokens=context, threads=settings.llm.threads, cache=cache,
            sha256=weights.sha256, **_llamacpp_options(settings),
        )
    if name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ConfigError(f"model file {path} does not exist")
        return LlamaCppModel(
            path, name=path.name, context_tokens=settings.llm.context_tokens or 8192, threads=settings.llm.threads,
            cache=cache, **_llamacpp_options(settings),
        )
    provider, _, model = name.partition(":")
    if provider == "openai" and model:
        from askchain.llm.openai_compat import OpenAIModel

        return OpenAIModel(model, retries=settings.llm.max_retries, cache=cache)
    if provider == "anthropic" and model:
        from askchain.llm.anthropic import AnthropicModel

        return AnthropicModel(model, retries=settings.llm.max_retries, cache=cache)
    if provider == "gemini" and model:
        from askchain.llm.gemini import GeminiModel

        return GeminiModel(model, retries=settings.llm.max_retries, cache=cache)
    known = ", ".join(named_models())
    raise ConfigError(
        f"unknown model '{name}': use one of {known}, a .gguf path, or <provider>:<model> with provider in {', '.join(PROVIDERS[1:])}"
    )


def _llamacpp_options(settings: Settings) -> dict:
    """Where and how much a llama.cpp model keeps of its earlier prompts' KV states (in memory and on disk), and how
    many tokens a step drafts by prompt lookup."""
    return {
        "prompt_states_mb": settings.llm.prompt_states_mb,
        "prompt_states_dir": settings.paths.cache("prompt_states"),
        "prompt_states_disk_mb": settings.llm.prompt_states_disk_mb,
        "lookup_draft_tokens": settings.llm.lookup_draft_tokens,
    }
