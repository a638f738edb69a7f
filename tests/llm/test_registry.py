"""Model names resolve through data (models.yaml); bad names and broken weights fail with one line."""

import pytest

from askchain.config import get_settings
from askchain.errors import ConfigError
from askchain.llm.embedded import EmbeddedWeights
from askchain.llm.registry import get_model, named_models


@pytest.mark.parametrize("name", ["gpt-5", "nosuch:model", "/tmp/missing.gguf"])
def test_unknown_models_are_config_errors(name):
    with pytest.raises(ConfigError) as info:
        get_model(name, get_settings())
    assert "\n" not in str(info.value)


def test_embedded_models_are_declared_with_full_hashes():
    for spec in named_models().values():
        assert len(spec["embedded"]["sha256"]) == 64


def test_missing_chunk_package_names_the_extra(tmp_path):
    weights = EmbeddedWeights("x.gguf", "askchain-no-such-chunk-{i}", 2, "1.0", 10, "0" * 64, "model-x")
    with pytest.raises(ConfigError, match=r"askchain\[model-x\]"):
        weights.assemble(tmp_path)


def test_wrong_hash_is_refused_and_nothing_is_left_behind(tmp_path):
    spec = dict(named_models()["qwen2.5-coder-0.5b"]["embedded"])
    spec["sha256"] = "f" * 64
    with pytest.raises(ConfigError, match="SHA-256"):
        EmbeddedWeights(**spec).assemble(tmp_path)
    assert list(tmp_path.iterdir()) == []
