"""Settings precedence, through the public functions only: package defaults (settings.yaml) < the YAML file named by
ASKCHAIN_CONFIG, else ./askchain.yaml < environment ASKCHAIN_SECTION__KEY < CLI flags (Settings.with_overrides)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import askchain
from askchain.config import get_settings
from askchain.errors import ConfigError

DEFAULTS = yaml.safe_load((Path(askchain.__file__).parent / "settings.yaml").read_text())


@pytest.fixture
def settings_from(tmp_path, monkeypatch):
    """Settings read afresh from the given environment, in a folder without an askchain.yaml of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASKCHAIN_CONFIG", raising=False)

    def read(**environment: str):
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        return get_settings()

    return read


def write_yaml(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def test_each_source_overrides_the_one_before(settings_from, tmp_path):
    defaults = DEFAULTS["db"]
    assert settings_from().db.model_dump() == defaults

    user = write_yaml(tmp_path / "mine.yaml", {"db": {"max_rows": 111, "timeout_s": 7}})
    from_file = settings_from(ASKCHAIN_CONFIG=str(user)).db
    assert (from_file.max_rows, from_file.timeout_s) == (111, 7)
    assert from_file.maximum_bytes_billed == defaults["maximum_bytes_billed"], "a file changes only the keys it names"

    from_env = settings_from(ASKCHAIN_DB__MAX_ROWS="222").db
    assert (from_env.max_rows, from_env.timeout_s) == (222, 7), "the environment over the file, key by key"

    flags = get_settings().with_overrides(db={"max_rows": 333, "timeout_s": None}).db
    assert (flags.max_rows, flags.timeout_s) == (333, 7), "flags over everything; a flag not given (None) is no change"


def test_a_local_askchain_yaml_is_read_unless_another_file_is_named(settings_from, tmp_path):
    write_yaml(tmp_path / "askchain.yaml", {"llm": {"seed": 7}})
    assert settings_from().llm.seed == 7
    named = write_yaml(tmp_path / "named.yaml", {"llm": {"threads": 3}})
    chosen = settings_from(ASKCHAIN_CONFIG=str(named)).llm
    assert (chosen.seed, chosen.threads) == (DEFAULTS["llm"]["seed"], 3)


def test_nested_keys_merge_at_every_level(settings_from, tmp_path):
    direct = DEFAULTS["pipeline"]["generators"]["direct"]
    user = write_yaml(tmp_path / "mine.yaml", {"pipeline": {"generators": {"direct": {"n": 2}}}})
    settings = settings_from(ASKCHAIN_CONFIG=str(user), ASKCHAIN_PIPELINE__GENERATORS__DIRECT__TOP_P="0.5")
    generators = settings.pipeline.generators
    assert (generators["direct"].n, generators["direct"].top_p) == (2, 0.5)
    assert generators["direct"].temperature == direct["temperature"]
    assert set(generators) == set(DEFAULTS["pipeline"]["generators"]), "the other generators are kept"
    flagged = settings.with_overrides(pipeline={"generators": {"query_plan": {"enabled": True}}}).pipeline.generators
    assert flagged["query_plan"].enabled and (flagged["direct"].n, flagged["direct"].top_p) == (2, 0.5)


@pytest.mark.parametrize("environment, file, message", [
    ({"ASKCHAIN_CONFIG": "{tmp}/nowhere.yaml"}, None, "nowhere.yaml"),
    ({"ASKCHAIN_DB__MAX_ROWS": "many"}, None, "max_rows"),
    ({}, {"db": {"max_rowz": 5}}, "max_rowz"),
    ({}, {"llm": {"seed": "x"}}, "seed"),
    ({"ASKCHAIN_LLM__LOOKUP_DRAFT_TOKENS": "-3"}, None, "lookup_draft_tokens"),
    # ranges of the pipeline's knobs, and a method's entry checked as the pipeline section it makes, at load time
    ({"ASKCHAIN_PIPELINE__MAX_REVISIONS": "-1"}, None, "pipeline.max_revisions: Input should be greater than"),
    ({"ASKCHAIN_PIPELINE__LEAD_CONFIRMATION": "-2"}, None, "lead_confirmation"),
    ({"ASKCHAIN_PIPELINE__LEAD_CHALLENGE": "3"}, None, "lead_challenge (3) is above lead_confirmation (2)"),
    ({}, {"pipeline": {"lead_confirmation": 4, "lead_challenge": 4}}, "above the lead's weight + 1 (2)"),
    ({}, {"pipeline": {"majority_margin": -1}}, "majority_margin"),
    ({}, {"confidence": {"min_coverage": 1.5}}, "min_coverage"),
    ({}, {"methods": {"mine": {"max_revisons": 2}}}, "methods.mine.max_revisons: Extra inputs"),
    ({}, {"methods": {"mine": {"generators": {"direct": {"top_p": 0}}}}}, "methods.mine.generators.direct.top_p"),
])
def test_bad_settings_are_one_line_config_errors(settings_from, tmp_path, environment, file, message):
    if file is not None:
        environment = {"ASKCHAIN_CONFIG": str(write_yaml(tmp_path / "bad.yaml", file))}
    with pytest.raises(ConfigError) as info:
        settings_from(**{name: value.replace("{tmp}", str(tmp_path)) for name, value in environment.items()})
    assert message in str(info.value) and "\n" not in str(info.value)
