"""One settings object: package defaults (settings.yaml) < user YAML file < environment (ASKCHAIN_SECTION__KEY) <
CLI flags. The package's settings.yaml is the only place a default is written: the section classes below declare
types, not values, so a default cannot be documented in one place and different in another."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, ValidationError,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict, YamlConfigSettingsSource

from askchain.errors import ConfigError

DEFAULTS_FILE = Path(__file__).with_name("settings.yaml")


class Section(BaseModel):
    """A settings section: an unknown key is a typo to report, not a value to carry around unread."""

    model_config = ConfigDict(extra="forbid")


class LLMSettings(Section):
    model: str
    factual_model: str | None
    creative_model: str | None
    cache: bool
    seed: int
    threads: int | None
    context_tokens: int | None
    prompt_states_mb: int
    prompt_states_disk_mb: int
    lookup_draft_tokens: NonNegativeInt
    max_retries: int

    def role_model(self, role: Literal["factual", "creative"]) -> str:
        """The model name a role's calls go to: its own setting, else the default model."""
        return getattr(self, f"{role}_model") or self.model


class DBSettings(Section):
    timeout_s: PositiveFloat
    max_rows: PositiveInt
    max_rows_ceiling: PositiveInt
    memory_limit_mb: PositiveInt
    threads: PositiveInt
    max_value_mb: PositiveInt
    spill_limit_mb: NonNegativeInt
    query_workers: PositiveInt
    interrupt_grace_s: PositiveFloat
    maximum_bytes_billed: int
    allow_unsafe_postgres_role: bool
    default_domain: str | None
    short_table_names: bool

    @model_validator(mode="after")
    def _max_rows_within_ceiling(self) -> "DBSettings":
        if self.max_rows > self.max_rows_ceiling:
            raise ValueError(f"max_rows ({self.max_rows}) is above max_rows_ceiling ({self.max_rows_ceiling})")
        return self


class PathSettings(Section):
    cache_dir: Path
    data_dir: Path
    models_dir: Path

    def cache(self, *parts: str) -> Path:
        return _ensure_parent(self.cache_dir.expanduser().joinpath(*parts))

    def data(self, *parts: str) -> Path:
        return _ensure_parent(self.data_dir.expanduser().joinpath(*parts))

    def traces(self) -> Path:
        """The folder each answer's trace is saved in (askchain.pipeline.trace), created."""
        path = self.data_dir.expanduser() / "traces"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def models(self) -> Path:
        path = self.models_dir.expanduser()
        path.mkdir(parents=True, exist_ok=True)
        return path


def _ensure_parent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


#: A share of votes, samples or words: between 0 and 1.
Share = Annotated[float, Field(ge=0, le=1)]


class GeneratorSettings(Section):
    n: NonNegativeInt
    temperature: NonNegativeFloat
    top_p: Annotated[float, Field(gt=0, le=1)]
    max_tokens: PositiveInt
    enabled: bool
    options: dict[str, Any]


class PipelineSettings(Section):
    """The answering methods' knobs (see settings.yaml for what each does and why it has its value)."""

    method: str  # an entry of `methods`
    examples_k: NonNegativeInt
    examples_scope: Literal["schema", "all"]
    examples_key: Literal["both", "question", "skeleton"]
    examples_held_out: list[str]
    skeleton: Literal["rules", "llm"]
    qdrant_url: str | None
    schema_linking: Literal["auto", "always", "never"]
    linking_token_budget: PositiveInt
    value_retrieval: bool
    semantic_layer: bool
    keywords: Literal["rules", "llm"]
    generators: dict[str, GeneratorSettings]
    lead_generator: str | None
    lead_confirmation: NonNegativeInt
    doubted_lead_confirmation: NonNegativeInt
    lead_challenge: NonNegativeInt
    draft_generator: str
    draft_first_wave: NonNegativeInt
    agreement_exit: NonNegativeInt
    revision_rounds: NonNegativeInt
    max_revisions: NonNegativeInt
    revise_beside_rows: bool
    empty_answer_share: Share
    selection: Literal["vote", "tournament"]
    selection_max_groups: PositiveInt
    majority_margin: NonNegativeFloat
    validation: bool
    rules_off: list[str]
    abstention: Literal["none", "rules", "llm"]
    planner: Literal["never", "rules", "always"]
    plan_max_steps: PositiveInt
    plan_preview_rows: NonNegativeInt
    answer: bool
    traces: bool

    @model_validator(mode="after")
    def _a_challenged_lead_can_stand(self) -> "PipelineSettings":
        """A challenge is decided by the samples drawn to confirm the lead (none when it answers alone), and a lead
        that stands then wins their vote only if fewer samples than the challenge cannot outvote its weight (a tie goes
        to the lead)."""
        lead = self.generators.get(self.lead_generator or "")
        if not (self.lead_challenge and self.lead_confirmation and lead):
            return self
        if self.lead_challenge > self.lead_confirmation:
            raise ValueError(f"lead_challenge ({self.lead_challenge}) is above lead_confirmation "
                             f"({self.lead_confirmation}): no lead could be challenged")
        weight = int(lead.options.get("weight", 1))
        if self.lead_challenge - 1 > weight:
            raise ValueError(f"lead_challenge ({self.lead_challenge}) is above the lead's weight + 1 ({weight + 1}): "
                             "samples too few to challenge it could outvote a lead that stands")
        return self


class ConfidenceSettings(Section):
    """The thresholds of the confidence rules (askchain.pipeline.confidence; settings.yaml says why each)."""

    high_vote_share: Share
    medium_vote_share: Share
    min_coverage: Share
    alternatives: NonNegativeInt
    alternative_rows: NonNegativeInt


class ServerSettings(Section):
    databases: dict[str, str]
    default_db: str | None
    max_concurrent: int
    token: str | None


class EthSyncSettings(Section):
    """`askchain eth sync` (askchain.domains.ethereum.sync; settings.yaml says why each)."""

    blocks_per_batch: PositiveInt
    calls_per_request: PositiveInt
    concurrency: PositiveInt
    max_calls_per_second: NonNegativeInt
    retries: NonNegativeInt
    backoff_s: PositiveFloat
    timeout_s: PositiveFloat
    reorg_depth: PositiveInt
    traces: Literal["auto", "trace_block", "debug_traceBlockByNumber", "none"]
    balances: bool


class Settings(BaseSettings):
    """Everything that varies between deployments; stages read their section of it."""

    model_config = SettingsConfigDict(env_prefix="ASKCHAIN_", env_nested_delimiter="__", extra="forbid")

    llm: LLMSettings
    db: DBSettings
    paths: PathSettings
    pipeline: PipelineSettings
    #: method name -> overrides of the pipeline section (askchain.pipeline.methods), each checked at load time as the
    #: pipeline section it makes (its keys, types and ranges)
    methods: dict[str, dict[str, Any]]
    confidence: ConfidenceSettings
    server: ServerSettings
    eth_sync: EthSyncSettings

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):
        user = user_settings_file()
        files = [DEFAULTS_FILE] + ([user] if user else [])
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=files, deep_merge=True))

    @model_validator(mode="after")
    def _methods_are_pipeline_settings(self) -> "Settings":
        pipeline = self.pipeline.model_dump()
        for name, entry in self.methods.items():
            try:
                PipelineSettings.model_validate(_deep_merge(pipeline, entry or {}))
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(part) for part in error["loc"])
                raise ValueError(f"methods.{name}.{where}: {error['msg']}") from None
        return self

    def with_overrides(self, **sections: dict[str, Any]) -> "Settings":
        """A copy with CLI-flag overrides applied over these settings (None values are ignored)."""
        data = self.model_dump()
        for section, values in sections.items():
            data[section] = _deep_merge(data.get(section, {}), {k: v for k, v in values.items() if v is not None})
        return Settings.model_validate(data)


def _deep_merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def user_settings_file() -> Path | None:
    """The user's YAML file: $ASKCHAIN_CONFIG, else ./askchain.yaml if present."""
    named = os.environ.get("ASKCHAIN_CONFIG")
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"ASKCHAIN_CONFIG names {path}, which does not exist")
        return path
    local = Path("askchain.yaml")
    return local if local.is_file() else None


def shared_data_dir() -> Path:
    """The public datasets folder: $ASKCHAIN_SHARED_DATA, else `shared/data` beside the repository checkout."""
    named = os.environ.get("ASKCHAIN_SHARED_DATA")
    return Path(named).expanduser() if named else Path(__file__).resolve().parents[2].parent / "shared" / "data"


def load_settings(**overrides: Any) -> Settings:
    """Settings from every source, with a one-line ConfigError for a bad file, key or value."""
    try:
        return Settings(**overrides)
    except ConfigError:
        raise
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")  # a check across sections names its own setting
        raise ConfigError(f"invalid setting {where}: {message}" if where else f"invalid setting {message}") from exc
    except Exception as exc:  # an unreadable or malformed YAML file
        raise ConfigError(f"invalid settings: {str(exc).splitlines()[0]}") from exc


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once (tests clear the cache when they change the environment)."""
    return load_settings()
