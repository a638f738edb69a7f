"""`askchain speed`: askchain's tokens/s beside llama.cpp's own llama-batched-bench."""

import json
import os
import stat
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from askchain.cli import app
from askchain.errors import ConfigError
from askchain.eval.speed import Speed, find_batched_bench, gap, parse_batched_bench

runner = CliRunner()

# as llama-batched-bench --output-format jsonl prints them (its README's example, abridged)
JSONL = """main: n_kv_max = 2048
{"n_kv_max": 2048, "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.23, "speed_pp": 547.453064, "t_tg": 3.5, "speed_tg": 36.532974, "t": 3.7, "speed": 68.49}
{"n_kv_max": 2048, "pp": 128, "tg": 128, "pl": 6, "n_kv": 896, "t_pp": 0.42, "speed_pp": 605.770935, "t_tg": 11.1, "speed_tg": 69.1, "t": 11.5, "speed": 44.41}
"""


def test_the_benchmarks_jsonl_becomes_one_speed_per_number_of_sequences():
    assert parse_batched_bench(JSONL) == [Speed(1, 128, 547.45, 128, 36.53), Speed(6, 128, 605.77, 768, 69.1)]


def test_a_benchmark_without_jsonl_is_a_config_error():
    with pytest.raises(ConfigError, match="no JSONL"):
        parse_batched_bench("|    PP |     TG |    B |\n")


@pytest.mark.parametrize("ours, theirs, said", [(18.7, 18.5, "+1.1 %"), (26.6, 30.5, "-12.8 %"), (5.0, 0.0, "-")])
def test_gap_is_relative_to_llama_cpp(ours, theirs, said):
    assert gap(ours, theirs) == said


@pytest.mark.parametrize("args, message", [
    (["--parallel", "0"], "between 1 and"),
    (["--parallel", "1,x"], "numbers separated by commas"),
    (["--parallel", "1,99"], "between 1 and"),
    (["--llama-bench", "/no/such/llama-batched-bench"], "does not exist"),
])
def test_bad_options_fail_before_any_model_loads(args, message):
    result = runner.invoke(app, ["speed", *args])
    assert isinstance(result.exception, ConfigError) and message in str(result.exception)


def test_a_named_benchmark_is_used_as_given(tmp_path):
    binary = tmp_path / "bench"
    binary.write_text("")
    assert find_batched_bench(binary) == binary


@pytest.mark.llm
def test_the_embedded_model_is_measured_beside_the_benchmark(tmp_path):
    """Through the real model and the CLI; the benchmark is a stand-in that checks the arguments it is given
    (the real llama-batched-bench is built by `make llama-batched-bench`, minutes of compiling)."""
    args = tmp_path / "args"
    bench = tmp_path / "llama-batched-bench"
    rows = "\n".join(json.dumps({"pp": 64, "tg": 8, "pl": n, "speed_pp": 60.0, "speed_tg": 15.0 * n}) for n in (1, 2))
    bench.write_text(f"#!/bin/sh\necho \"$@\" > {args}\ncat <<'EOF'\n{rows}\nEOF\n")
    bench.chmod(bench.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "speed.json"
    done = subprocess.run([sys.executable, "-m", "askchain.cli", "speed", "--prompt", "64", "--generate", "8",
                           "--parallel", "1,2", "--llama-bench", str(bench), "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    ours = figures["askchain"]
    assert [s["parallel"] for s in ours] == [1, 2] and [s["generated_tokens"] for s in ours] == [8, 16]
    assert all(s["prompt_tokens"] > 0 and s["prompt_tps"] > 0 and s["generation_tps"] > 0 for s in ours)
    assert [s["generation_tps"] for s in figures["llama_batched_bench"]] == [15.0, 30.0]
    given = args.read_text().split()
    assert given[given.index("-npl") + 1] == "1,2" and given[given.index("-m") + 1].endswith(".gguf")
    assert "-pps" in given and "-kvu" in given and given[given.index("-fa") + 1] == "off"  # as askchain's context
    assert "llama.cpp" in done.stdout
