"""One settings object: package defaults < YAML file < environment (ASKCHAIN_SECTION__KEY) < CLI flags."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from askchain.errors import ConfigError

DEFAULTS_FILE = Path(__file__).with_name("settings.yaml")


class LLMSettings(BaseModel):
    model: str = "qwen2.5-coder-1.5b"
    factual_model: str | None = None
    creative_model: str | None = None
    cache: bool = True
    seed: int = 42
    threads: int | None = None
    context_tokens: int | None = None
    prompt_states_mb: int = 1024


class DBSettings(BaseModel):
    timeout_s: float = 30
    max_rows: int = 10000
    maximum_bytes_billed: int = 10_000_000_000


class PathSettings(BaseModel):
    cache_dir: Path = Path("~/.cache/askchain")
    data_dir: Path = Path("~/.local/share/askchain")

    def cache(self, *parts: str) -> Path:
        path = self.cache_dir.expanduser().joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def data(self, *parts: str) -> Path:
        path = self.data_dir.expanduser().joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


class GeneratorSettings(BaseModel):
    n: int = 1
    temperature: float = 0.8
    top_p: float = 0.95
    max_tokens: int = 320
    enabled: bool = True
    options: dict[str, Any] = {}


class PipelineSettings(BaseModel):
    """The test-time-scaling pipeline's knobs; unknown keys are kept for other components (e.g. the server)."""

    model_config = ConfigDict(extra="allow")

    method: str = "pipeline"
    examples_k: int = 3
    examples_scope: Literal["schema", "all"] = "schema"
    skeleton: str = "rules"
    qdrant_url: str | None = None
    schema_linking: str = "auto"
    linking_token_budget: int = 4000
    value_retrieval: bool = True
    keywords: str = "rules"
    generators: dict[str, GeneratorSettings] = {}
    draft_generator: str = "direct"
    agreement_exit: int = 4
    revision_rounds: int = 5
    max_revisions: int = 6
    empty_answer_share: float = 0.5
    selection: Literal["vote", "tournament"] = "vote"
    selection_max_groups: int = 3
    majority_margin: float = 2
    self_consistency_n: int = 6
    self_consistency_temperature: float = 0.8
    answer: bool = True
    traces: bool = True

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


def _deep_merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _load_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"settings file {path} must hold a mapping")
    return data


def user_settings_file() -> Path | None:
    named = os.environ.get("ASKCHAIN_CONFIG")
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"ASKCHAIN_CONFIG names {path}, which does not exist")
        return path
    local = Path("askchain.yaml")
    return local if local.is_file() else None


class _YamlSource(PydanticBaseSettingsSource):
    def get_field_value(self, field, field_name):  # pragma: no cover - unused by __call__
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        data = _load_yaml(DEFAULTS_FILE)
        user = user_settings_file()
        if user:
            data = _deep_merge(data, _load_yaml(user))
        return data


class Settings(BaseSettings):
    """Everything that varies between deployments; stages read their section of it."""

    model_config = SettingsConfigDict(env_prefix="ASKCHAIN_", env_nested_delimiter="__", extra="ignore")

    llm: LLMSettings = LLMSettings()
    db: DBSettings = DBSettings()
    paths: PathSettings = PathSettings()
    pipeline: PipelineSettings = PipelineSettings()

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):
        return (init_settings, env_settings, _YamlSource(settings_cls))

    def with_overrides(self, **sections: dict[str, Any]) -> "Settings":
        """A copy with CLI-flag overrides applied (None values are ignored)."""
        data = self.model_dump()
        for section, values in sections.items():
            data[section] = _deep_merge(data.get(section, {}), {k: v for k, v in values.items() if v is not None})
        return Settings.model_validate(data)


def shared_data_dir() -> Path:
    """The public datasets folder: $ASKCHAIN_SHARED_DATA, else `shared/data` beside the repository checkout."""
    named = os.environ.get("ASKCHAIN_SHARED_DATA")
    return Path(named).expanduser() if named else Path(__file__).resolve().parents[2].parent / "shared" / "data"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    try:
        return Settings()
    except ConfigError:
        raise
    except Exception as exc:  # pydantic validation of a bad env var or file
        raise ConfigError(f"invalid settings: {str(exc).splitlines()[0]}") from exc
