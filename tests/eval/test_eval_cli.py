"""`askchain eval`: bad input is one line and exit code 2; `report` re-renders a results folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from askchain.cli import app
from askchain.config import get_settings
from askchain.eval.runner import run_eval, select_examples
from askchain.llm.fake import ScriptedModel

ASKCHAIN = Path(sys.executable).with_name("askchain")


def _askchain(*args: str) -> subprocess.CompletedProcess:
    # wide COLUMNS: rich would otherwise wrap the one-line message at 80 columns when stderr is not a terminal
    env = {**os.environ, "COLUMNS": "500"}
    return subprocess.run([str(ASKCHAIN), *args], capture_output=True, text=True, timeout=120, env=env)


def test_bad_input_is_one_line_with_exit_code_2(tmp_path, spider_sample_root):
    (tmp_path / "dev.json").write_text('[{"db_id": "singer", "question": ')
    cases = [
        (("eval", "spider", "--data", str(tmp_path)), "is not valid JSON"),
        (("eval", "bird", "--data", str(tmp_path), "--split", "test"), "unknown BIRD split"),
        (("eval", "spider", "--data", str(spider_sample_root), "--method", "nope", "--out", str(tmp_path / "o")),
         "unknown method"),
        (("eval", "report", str(tmp_path / "nothing")), "holds no results.jsonl"),
        (("eval", "compare", str(tmp_path / "nothing"), str(tmp_path)), "holds no results.jsonl"),
        (("eval", "values", "wikisql"), "unknown dataset 'wikisql'"),
        (("eval", "examples", "wikisql"), "unknown dataset 'wikisql'"),
    ]
    for args, message in cases:
        done = _askchain(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], done.stderr


def test_report_command_rerenders_a_results_folder(spider, tmp_path):
    chosen = select_examples(spider.examples, 2, seed=5)
    replies = {e.question: e.gold_sql for e in chosen}
    model = ScriptedModel(lambda request, i: replies[request.messages[-1][1].split("-- Question: ")[-1].strip()])
    run_eval(spider, "baseline", model, get_settings(), limit=2, seed=5, out_dir=tmp_path)
    for name in ("report.md", "report.json", "report.png"):
        (tmp_path / name).unlink()

    result = CliRunner().invoke(app, ["eval", "report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "100.0%" in result.output
    assert all((tmp_path / name).is_file() for name in ("report.md", "report.json", "report.png"))


def test_compare_scores_runs_on_the_questions_all_answered(spider, tmp_path):
    chosen = select_examples(spider.examples, 3, seed=5)
    gold = {e.question: e.gold_sql for e in chosen}
    right = ScriptedModel(lambda request, i: gold[request.messages[-1][1].split("-- Question: ")[-1].strip()])
    wrong = ScriptedModel(lambda request, i: "SELECT 1")
    run_eval(spider, "baseline", right, get_settings(), limit=3, seed=5, out_dir=tmp_path / "right")
    run_eval(spider, "baseline", wrong, get_settings(), limit=3, seed=5, out_dir=tmp_path / "wrong")
    records = (tmp_path / "right" / "results.jsonl").read_text().splitlines()
    (tmp_path / "right" / "results.jsonl").write_text("\n".join(records[:2]) + "\n")  # an unfinished run

    result = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "right"), str(tmp_path / "wrong")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2 questions answered by every run")
    rows = [line for line in result.output.splitlines() if line.startswith("| baseline")]
    assert "| 100.0% |" in rows[0] and "| 0.0% |" in rows[1]


@pytest.mark.llm
def test_smoke_run_with_the_embedded_model(tmp_path, spider_sample_root):
    done = _askchain("eval", "spider", "--data", str(spider_sample_root), "--limit", "2", "--seed", "7", "--method", "baseline",
                     "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.md").is_file()
