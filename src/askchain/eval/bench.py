"""`askchain bench`: where the time and tokens go, stage by stage, over an evaluation sample.

It runs (or resumes) the same evaluation as `askchain eval` and then reads each question's trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from askchain.errors import DatasetError

console = Console()


#: The profile's columns: (key, heading).
COLUMNS = (
    ("questions", "questions"), ("mean_s", "mean s"), ("median_s", "median s"),
    ("prompt_tokens", "prompt tokens evaluated"), ("restored_tokens", "prompt tokens restored"),
    ("completion_tokens", "completion tokens"), ("calls", "LLM calls"),
)


def stage_profile(records: list[dict[str, Any]], traces_dir: Path) -> dict[str, dict[str, float]]:
    """Per stage: how many questions ran it, mean and median seconds, and means of the prompt tokens the model
    evaluated, of those restored from a saved KV state instead (in memory or on disk), of completion tokens and
    of calls."""
    per_stage: dict[str, list[dict]] = {}
    found = 0
    for record in records:
        path = traces_dir / f"{record.get('run_id')}.json"
        if not record.get("run_id") or not path.is_file():
            continue
        found += 1
        totals: dict[str, dict] = {}
        for st in json.loads(path.read_text())["stages"]:
            agg = totals.setdefault(st["stage"], {"seconds": 0.0, "prompt": 0, "restored": 0, "completion": 0, "calls": 0})
            usage = st.get("usage", {})
            agg["seconds"] += st["seconds"]
            agg["prompt"] += usage.get("prompt_tokens", 0) - usage.get("restored_tokens", 0)
            agg["restored"] += usage.get("restored_tokens", 0)
            agg["completion"] += usage.get("completion_tokens", 0)
            agg["calls"] += usage.get("calls", 0)
        for name, agg in totals.items():
            per_stage.setdefault(name, []).append(agg)
    if not found:
        raise DatasetError(f"no traces found in {traces_dir} for these results (were traces switched off?)")
    return {
        name: {
            "questions": len(rows),
            "mean_s": round(float(np.mean([r["seconds"] for r in rows])), 3),
            "median_s": round(float(np.median([r["seconds"] for r in rows])), 3),
            "prompt_tokens": round(float(np.mean([r["prompt"] for r in rows])), 1),
            "restored_tokens": round(float(np.mean([r["restored"] for r in rows])), 1),
            "completion_tokens": round(float(np.mean([r["completion"] for r in rows])), 1),
            "calls": round(float(np.mean([r["calls"] for r in rows])), 2),
        }
        for name, rows in per_stage.items()
    }


def render_profile(profile: dict[str, dict[str, float]]) -> str:
    lines = ["| stage | " + " | ".join(heading for _, heading in COLUMNS) + " |", "|---|" + "---:|" * len(COLUMNS)]
    for name, p in profile.items():
        lines.append(f"| {name} | " + " | ".join(str(p[key]) for key, _ in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def bench(
    dataset: str = typer.Argument(..., help="spider, bird or eth."),
    method: str = typer.Option("pipeline", "--method", "-m", help="baseline, self-consistency or pipeline."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (default from settings)."),
    limit: Optional[int] = typer.Option(20, "--limit", help="Questions drawn at random."),
    seed: int = typer.Option(0, "--seed", help="Sampling seed."),
    data: Optional[Path] = typer.Option(None, "--data", help="Dataset folder (spider/bird)."),
    results: Optional[Path] = typer.Option(None, "--results", help="Profile an existing `askchain eval` folder instead of running."),
):
    """Seconds and tokens per stage over a sample (runs or resumes the evaluation, then reads the traces)."""
    from askchain.config import get_settings
    from askchain.eval.datasets import load_dataset
    from askchain.eval.results import read_results
    from askchain.eval.runner import run_eval

    settings = get_settings().with_overrides(llm={"model": model})
    if results is None:
        run = run_eval(load_dataset(dataset, data), method, model, settings, limit, seed, console=console)
        results = run.out_dir
    records = [r for r in read_results(results) if not r.get("gold_error")]
    if not records:
        raise DatasetError(f"{results} holds no results")
    profile = stage_profile(records, settings.paths.traces())
    table = Table("stage", *(heading for _, heading in COLUMNS), title=f"{results}")
    for name, p in profile.items():
        table.add_row(name, *(str(p[key]) for key, _ in COLUMNS))
    console.print(table)
    (results / "bench.json").write_text(json.dumps(profile, indent=1))
    (results / "bench.md").write_text(render_profile(profile))
    console.print(f"wrote {results / 'bench.md'}")


def register(app: typer.Typer) -> None:
    app.command()(bench)
