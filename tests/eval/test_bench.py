"""Per-stage profile from traces."""

import json

import pytest

from askchain.errors import DatasetError
from askchain.eval.bench import render_profile, stage_profile


def _trace(folder, run_id, stages):
    (folder / f"{run_id}.json").write_text(json.dumps({"run_id": run_id, "stages": stages}))


def test_stage_profile_sums_repeated_stages_per_question(tmp_path):
    usage = lambda p, c, r=0: {"prompt_tokens": p, "completion_tokens": c, "calls": 1, "restored_tokens": r}  # noqa: E731
    _trace(tmp_path, "a", [{"stage": "generate", "seconds": 2.0, "usage": usage(100, 10, 80)},
                           {"stage": "generate", "seconds": 1.0, "usage": usage(50, 5)}])
    _trace(tmp_path, "b", [{"stage": "generate", "seconds": 5.0, "usage": usage(300, 30)},
                           {"stage": "select", "seconds": 0.5, "usage": usage(0, 0)}])
    profile = stage_profile([{"run_id": "a"}, {"run_id": "b"}, {"run_id": None}], tmp_path)
    assert profile["generate"] == {"questions": 2, "mean_s": 4.0, "median_s": 4.0, "prompt_tokens": 185.0,
                                   "restored_tokens": 40.0, "completion_tokens": 22.5, "calls": 1.5}
    assert profile["select"]["questions"] == 1
    table = render_profile(profile)
    assert "| prompt tokens evaluated | prompt tokens restored |" in table
    assert "| generate | 2 | 4.0 | 4.0 | 185.0 | 40.0 | 22.5 | 1.5 |" in table


def test_no_traces_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="no traces"):
        stage_profile([{"run_id": "missing"}], tmp_path)
