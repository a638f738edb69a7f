"""`askchain eval spider|bird|eth|report`: run a benchmark sample and write its report."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from askchain.eval.compare import COMPARATORS
from askchain.config import shared_data_dir
from askchain.errors import DatasetError
from askchain.eval.datasets import Dataset, load_bird, load_domain_questions, load_spider

app = typer.Typer(no_args_is_help=True, help="Measure execution accuracy on Spider, BIRD and the Ethereum questions.")
console = Console()
#: The domain whose questions `askchain eval eth` evaluates (the datasets module knows domains only as plugins).
ETH_DOMAIN = "ethereum"

LIMIT = typer.Option(None, "--limit", help="Evaluate N questions drawn at random (default: all).")
SEED = typer.Option(0, "--seed", help="Sampling seed: the same seed draws the same questions.")
METHOD = typer.Option("baseline", "--method", "-m", help="baseline, self-consistency or pipeline.")
MODEL = typer.Option(None, "--model", help="Model name (default from settings).")
FIRST = typer.Option(None, "--first", help="Stop after the sample's first K questions (a later run continues).")
OUT = typer.Option(None, "--out", help="Results folder (default runs/eval/<dataset>-<method>-<model>-<limit>-<seed>/).")
REUSE = typer.Option(None, "--reuse", help="Copy the answers this results folder (same dataset, method, model and "
                     "settings) holds for the sample's questions instead of asking them again; repeatable.")
RERUN = typer.Option(None, "--rerun", help="With --reuse: ask this question (id) again, not copy it; repeatable.")
OFF = typer.Option(None, "--off", help="Switch this rule (id) off (pipeline.rules_off); with --reuse, only the "
                   "questions its traces show it acted on are asked again; repeatable.")


def _run(dataset: Dataset, method: str, model: str | None, limit: int | None, seed: int, out: Path | None,
         first: int | None, reuse: list[Path] | None, rerun: list[str] | None, off: list[str] | None = None) -> None:
    from askchain.config import get_settings
    from askchain.eval.ablation import questions_to_ask
    from askchain.eval.runner import run_eval
    from askchain.rules.registry import switched_off

    settings = get_settings()
    if model:
        settings = settings.with_overrides(llm={"model": model})
    rerun = list(rerun or ())
    if off:
        switched_off(off)  # an unknown id is a settings error before any work
        off = sorted(set(off) | set(settings.pipeline.rules_off))  # beside those the settings switch off
        settings = settings.with_overrides(pipeline={"rules_off": off})
        traces = settings.paths.traces()
        rerun += sorted({qid for folder in reuse or () for qid in questions_to_ask(folder, traces, off)})
    skipped = sum(dataset.skipped.values())
    if skipped:
        console.print(f"[dim]{skipped} questions skipped: database missing ({', '.join(sorted(dataset.skipped))})[/dim]")
    run = run_eval(dataset, method, model, settings, limit, seed, out, console=console, first=first, reuse=reuse or (),
                   rerun=rerun, reuse_despite=("rules_off",) if off else ())
    _print_summary(run.out_dir)


def _print_summary(out_dir: Path) -> None:
    import json

    from askchain.eval.report import provenance_brief

    summary: dict[str, Any] = json.loads((out_dir / "report.json").read_text())
    table = Table(title=f"{summary['run']['dataset']} · {summary['evaluated']} questions scored")
    table.add_column("difficulty")
    table.add_column("n", justify="right")
    for c in COMPARATORS:
        table.add_column(f"EX {c}" + (" *" if c == summary["primary_comparator"] else ""), justify="right")
    fmt = lambda v: "–" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    for level, row in summary["by_difficulty"].items():
        table.add_row(level, str(row["n"]), *(fmt(row[c]) for c in COMPARATORS))
    table.add_row("all", str(summary["evaluated"]), *(fmt(summary["ex"][c]) for c in COMPARATORS), style="bold")
    console.print(table)
    console.print(
        f"gold failed {summary['gold_failed']} · execution errors {fmt(summary['execution_error_rate'])} · "
        f"median latency {summary['latency_s']['median']} s · oracle {fmt(summary['oracle_rate'])}"
    )
    if summary.get("by_confidence"):
        console.print("EX by confidence: " + " · ".join(f"{level} {fmt(row['ex'])} (n={row['n']})"
                                                       for level, row in summary["by_confidence"].items()))
    console.print(f"runs (commit, model hash, date): {provenance_brief(summary['provenance'])}", markup=False)
    console.print(f"report: {out_dir / 'report.md'}, {out_dir / 'report.json'}, {out_dir / 'report.png'}")


@app.command()
def spider(
    data: Optional[Path] = typer.Option(None, "--data", help="Spider folder (default $ASKCHAIN_SHARED_DATA/spider)."),
    split: str = typer.Option("dev", "--split", help="Reads <data>/<split>.json."),
    limit: Optional[int] = LIMIT, seed: int = SEED, method: str = METHOD, model: Optional[str] = MODEL, out: Optional[Path] = OUT,
    first: Optional[int] = FIRST, reuse: Optional[List[Path]] = REUSE, rerun: Optional[List[str]] = RERUN,
    off: Optional[List[str]] = OFF,
):
    """Spider: execution accuracy, scored Spider-style by default (multiset rows, any column order)."""
    _run(load_spider(data or shared_data_dir() / "spider", split), method, model, limit, seed, out, first, reuse, rerun, off)


@app.command()
def bird(
    data: Optional[Path] = typer.Option(None, "--data", help="BIRD folder (default $ASKCHAIN_SHARED_DATA/bird)."),
    split: str = typer.Option("dev", "--split", help="dev or minidev."),
    limit: Optional[int] = LIMIT, seed: int = SEED, method: str = METHOD, model: Optional[str] = MODEL, out: Optional[Path] = OUT,
    first: Optional[int] = FIRST, reuse: Optional[List[Path]] = REUSE, rerun: Optional[List[str]] = RERUN,
    off: Optional[List[str]] = OFF,
):
    """BIRD: the evidence is passed as a hint; scored by BIRD's EX (row sets) by default."""
    _run(load_bird(data or shared_data_dir() / "bird", split), method, model, limit, seed, out, first, reuse, rerun, off)


@app.command()
def eth(
    questions: Optional[Path] = typer.Option(None, "--questions", help="Questions JSONL (default: the Ethereum domain's)."),
    split: str = typer.Option(
        "dev", "--split",
        help="dev (what work is tuned on; its families are left out of the examples while evaluated), test (held-out "
             "families, never retrievable: run only at milestones), pool or all."),
    limit: Optional[int] = LIMIT, seed: int = SEED, method: str = METHOD, model: Optional[str] = MODEL, out: Optional[Path] = OUT,
    first: Optional[int] = FIRST, reuse: Optional[List[Path]] = REUSE, rerun: Optional[List[str]] = RERUN,
    off: Optional[List[str]] = OFF,
):
    """The Ethereum question bank's development split (or another) on the local Ethereum database, scored Spider 2.0-style."""
    _run(load_domain_questions(ETH_DOMAIN, questions, split), method, model, limit, seed, out, first, reuse, rerun, off)


@app.command()
def abstention(
    data: Optional[Path] = typer.Option(None, "--data", help="Spider folder (default $ASKCHAIN_SHARED_DATA/spider)."),
    limit: Optional[int] = typer.Option(40, "--limit", help="Questions drawn from each of the four sets (0: all)."),
    seed: int = SEED, method: str = typer.Option("pipeline", "--method", "-m", help="baseline, self-consistency or pipeline."),
    model: Optional[str] = MODEL, out: Optional[Path] = OUT,
):
    """Unanswerable questions (Ethereum, and Spider databases asked for columns they lack) and answerable ones
    (Spider dev, Ethereum): abstention rate, false-abstention rate and EX by confidence level."""
    from askchain.config import get_settings
    from askchain.eval.abstention import run_abstention

    settings = get_settings()
    if model:
        settings = settings.with_overrides(llm={"model": model})
    out_dir = run_abstention(data or shared_data_dir() / "spider", method, model or settings.llm.model, settings,
                             limit or None, seed, out,
                             on_record=lambda r: console.print(f"[dim]{r['set']} {r['id']}: "
                                                               f"{'abstained' if r.get('abstained') else r.get('confidence')}[/dim]"))
    console.print((out_dir / "report.md").read_text(), markup=False)
    console.print(f"report: {out_dir / 'report.md'}, {out_dir / 'report.json'}")


@app.command()
def compare(
    out_dirs: List[Path] = typer.Argument(..., help="Two or more results folders (one per method or model)."),
):
    """Compare runs side by side on the questions all of them have answered."""
    from askchain.eval.report import compare_runs, render_comparison

    for out_dir in out_dirs:
        if not (out_dir / "results.jsonl").is_file():
            raise DatasetError(f"{out_dir} holds no results.jsonl")
    console.print(render_comparison(compare_runs(out_dirs)), markup=False, soft_wrap=True)


@app.command()
def report(out_dir: Path = typer.Argument(..., help="A results folder holding results.jsonl.")):
    """Re-render report.md, report.json and report.png from a results folder (an abstention run's: its own report)."""
    from askchain.eval import abstention
    from askchain.eval.report import write_report
    from askchain.eval.results import read_meta

    if read_meta(out_dir).get("dataset") == abstention.DATASET:
        abstention.write_abstention_report(out_dir)
        console.print((out_dir / "report.md").read_text(), markup=False)
        return
    write_report(out_dir)
    _print_summary(out_dir)


@app.command()
def selection(
    out_dir: Path = typer.Argument(..., help="A pipeline results folder (its traces must still be on disk)."),
    model: Optional[str] = MODEL,
):
    """Replay the selection of a pipeline run: how often the vote and the judge's tournament pick a right result."""
    import json

    from askchain.config import get_settings
    from askchain.eval.selection import audit_selection, render_audit
    from askchain.resources import process_resources

    settings = get_settings()
    judge = process_resources().model(model or settings.llm.role_model("factual"), settings)
    audit = audit_selection(out_dir, judge, settings)
    (out_dir / "selection.json").write_text(json.dumps({"judge": judge.model_id, **audit.as_dict()}, indent=1))
    console.print(render_audit(audit, judge.model_id), markup=False)
    console.print(f"wrote {out_dir / 'selection.json'}")


@app.command()
def revote(
    out_dir: Path = typer.Argument(..., help="A pipeline results folder whose run drew every draft sample beside the "
                                   "lead (pipeline.lead_confirmation = the draft's n)."),
):
    """Recount a run's answers under other lead policies (alone, confirmed by k samples, voting at weight w), without
    a model (writes no files)."""
    from askchain.eval.results import read_meta
    from askchain.eval.revote import revote_table

    if read_meta(out_dir).get("method") != "pipeline":
        raise DatasetError(f"{out_dir} holds no pipeline run: the recount needs one")
    console.print(revote_table(out_dir), markup=False)


@app.command()
def rules(
    out_dir: Path = typer.Argument(..., help="A pipeline results folder (its traces must still be on disk)."),
):
    """Where each check and repair acted in a run: the questions, and how many were right (writes no files); an
    ablation asks those again with the rule off (`--reuse OUT --off RULE`)."""
    from askchain.config import get_settings
    from askchain.eval.ablation import rules_table
    from askchain.eval.results import read_meta

    meta = read_meta(out_dir)
    if meta.get("method") != "pipeline":
        raise DatasetError(f"{out_dir} holds no pipeline run: only the pipeline runs the rules")
    traces = get_settings().paths.traces()
    console.print(rules_table(out_dir, traces, meta.get("comparator", "spider2")), markup=False)


@app.command()
def values(
    dataset: str = typer.Argument(..., help="spider, bird or eth."),
    split: Optional[str] = typer.Option(None, "--split", help="The dataset's split (default: its dev split)."),
    limit: Optional[int] = LIMIT, seed: int = SEED,
):
    """Value hints against the gold SQL's literals, without a model: precision and coverage (writes no files)."""
    from askchain.config import get_settings
    from askchain.eval.datasets import load_dataset
    from askchain.eval.runner import select_examples
    from askchain.eval.values import audit_values, render_value_audit

    loaded = load_dataset(dataset, split=split)
    audit = audit_values(loaded, select_examples(loaded.examples, limit, seed), get_settings())
    console.print(render_value_audit(audit), markup=False)


@app.command()
def examples(
    dataset: str = typer.Argument(..., help="spider, bird or eth."),
    split: Optional[str] = typer.Option(None, "--split", help="The dataset's split (default: its evaluated split)."),
    limit: Optional[int] = LIMIT, seed: int = SEED,
):
    """Few-shot examples against the gold SQL, without a model: how much of each question's query shape the examples
    found for it show, its own template family left out (writes no files)."""
    from askchain.config import get_settings
    from askchain.eval.datasets import load_dataset
    from askchain.eval.examples import audit_examples, render_example_audit, template_families
    from askchain.eval.runner import select_examples

    loaded = load_dataset(dataset, split=split)
    audit = audit_examples(loaded, select_examples(loaded.examples, limit, seed), template_families(loaded), get_settings())
    console.print(render_example_audit(audit), markup=False)
