"""Summarise a results JSONL: EX per comparator and difficulty, error classes, latency, tokens, oracle rate, and
the runs (commit, model hash, date) whose answers it holds.

Writes `report.md`, `report.json` and `report.png` beside the results, so a run can be re-rendered any time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from askchain.errors import DatasetError
from askchain.eval.compare import COMPARATORS
from askchain.eval.hardness import LEVELS
from askchain.eval.results import EXECUTION_ERRORS, RESULTS_FILE, RUN_KEY, read_meta, read_results

DIFFICULTY_ORDER = (*LEVELS, "simple", "moderate", "challenging")
ERROR_CLASSES = ("none", "wrong-result", "empty-result", *EXECUTION_ERRORS)


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def _difficulty_key(level: str) -> tuple:
    return (DIFFICULTY_ORDER.index(level) if level in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER), level)


def summarize(records: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The report's numbers; questions whose gold query failed are counted and left out of every rate."""
    scored = [r for r in records if not r.get("gold_error")]
    n = len(scored)
    by_level: dict[str, list[dict]] = {}
    for r in scored:
        by_level.setdefault(r.get("difficulty") or "unknown", []).append(r)
    latency = np.array([r["latency_s"] for r in scored], dtype=float)
    oracle = [r for r in scored if r.get("any_candidate_correct")]
    primary = meta.get("comparator", "spider")
    errors = {c: sum(r["error_class"] == c for r in scored) for c in ERROR_CLASSES}
    return {
        "run": {k: meta.get(k) for k in ("dataset", "split", "source", "method", "model", "limit", "seed")},
        "primary_comparator": primary,
        "questions": len(records),
        "evaluated": n,
        "gold_failed": len(records) - n,
        "skipped_missing_db": sum((meta.get("skipped_missing_db") or {}).values()),
        "skipped_by_db": meta.get("skipped_missing_db") or {},
        "ex": {c: _rate(sum(r["correct"][c] for r in scored), n) for c in COMPARATORS},
        "by_difficulty": {
            level: {"n": len(rs), **{c: _rate(sum(r["correct"][c] for r in rs), len(rs)) for c in COMPARATORS}}
            for level, rs in sorted(by_level.items(), key=lambda kv: _difficulty_key(kv[0]))
        },
        "error_classes": errors,
        "execution_error_rate": _rate(sum(errors.get(c, 0) for c in EXECUTION_ERRORS), n),
        "latency_s": {
            "median": round(float(np.median(latency)), 3) if n else None,
            "p90": round(float(np.percentile(latency, 90)), 3) if n else None,
            "mean": round(float(latency.mean()), 3) if n else None,
        },
        "tokens_per_question": {
            "prompt": _mean([r["prompt_tokens"] for r in scored]),
            "completion": _mean([r["completion_tokens"] for r in scored]),
        },
        "candidates_per_question": _mean([r["n_candidates"] for r in scored]),
        "oracle_rate": _rate(len(oracle), n),
        "generators": generator_stats(scored),
        "selected_right_when_some_candidate_right": _rate(sum(r["correct"][primary] for r in oracle), len(oracle)),
        "provenance": summarize_runs(records, meta),
        "by_confidence": by_confidence(scored, primary),
    }


def by_confidence(records: list[dict[str, Any]], comparator: str) -> dict[str, dict[str, Any]]:
    """EX per confidence level (askchain.pipeline.confidence) of the records that carry one: calibration, since high
    should be right far more often than low."""
    levels: dict[str, list[bool]] = {}
    for r in records:
        if r.get("confidence"):
            levels.setdefault(r["confidence"], []).append(bool(r["correct"][comparator]))
    return {level: {"n": len(levels[level]), "ex": _rate(sum(levels[level]), len(levels[level]))}
            for level in ("high", "medium", "low") if level in levels}


def _confidence_lines(levels: dict[str, dict[str, Any]]) -> list[str]:
    if not levels:
        return []
    return ["## EX by confidence", "", "| confidence | n | EX |", "|---|---:|---:|",
            *(f"| {level} | {row['n']} | {_pct(row['ex'])} |" for level, row in levels.items()), ""]


def summarize_runs(records: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The runs whose answers `records` hold, briefly, with how many each gave; `unrecorded` counts the answers of
    runs that kept no provenance (folders from before it was recorded, rows copied by hand)."""
    answered: dict[str, int] = {}
    for r in records:
        answered[r.get(RUN_KEY)] = answered.get(r.get(RUN_KEY), 0) + 1
    runs = []
    for run in meta.get("runs") or []:
        if run["id"] not in answered:
            continue
        runs.append({
            "id": run["id"], "questions": answered.pop(run["id"]), "date": run.get("date"), "commit": run.get("commit"),
            "dirty": run.get("dirty"), "model": (run.get("model") or {}).get("id"),
            "model_sha256": (run.get("model") or {}).get("sha256"),
            "copied_from": run.get("copied_from"), "recorded": run.get("recorded", True),
        })
    return {"runs": runs, "unrecorded": sum(answered.values())}


def _run_brief(run: dict[str, Any]) -> str:
    """Commit (* when the tree was dirty), model hash prefix and date: enough to tell two runs apart."""
    if not run["recorded"]:
        return "not recorded"
    commit = f"{run['commit'][:7]}{'*' if run['dirty'] else ''}" if run["commit"] else "no commit"
    model = run["model_sha256"][:8] if run["model_sha256"] else "no model hash"
    return f"{commit} {model} {(run['date'] or '')[:10]}"


def provenance_brief(provenance: dict[str, Any]) -> str:
    """One table cell for a folder's runs: a run's brief, or each distinct brief with its number of questions."""
    answered: dict[str, int] = {}
    for run in provenance["runs"]:
        answered[_run_brief(run)] = answered.get(_run_brief(run), 0) + run["questions"]
    if provenance["unrecorded"]:
        answered["not recorded"] = answered.get("not recorded", 0) + provenance["unrecorded"]
    if len(answered) == 1:
        return next(iter(answered))
    return "; ".join(f"{brief} ({n} q.)" for brief, n in answered.items())


def generator_stats(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per generator (its revisions included): on how many questions it had a right candidate, and on how
    many it was the only generator that did — what each generator adds to what the selector can reach."""
    stats: dict[str, dict[str, Any]] = {}
    for r in records:
        right_by = {}
        for c in r.get("candidates") or []:
            name = (c.get("generator") or "?").split("+")[0]
            right_by[name] = right_by.get(name, False) or c["right"]
        for name, right in right_by.items():
            entry = stats.setdefault(name, {"questions": 0, "right": 0, "only_right": 0})
            entry["questions"] += 1
            entry["right"] += right
            entry["only_right"] += right and sum(right_by.values()) == 1
    return {
        name: {**e, "right_rate": _rate(e["right"], len(records))} for name, e in sorted(stats.items())
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def render_markdown(summary: dict[str, Any]) -> str:
    run = summary["run"]
    comparators = list(COMPARATORS)
    primary = summary["primary_comparator"]
    head = " | ".join(f"EX {c}{' (primary)' if c == primary else ''}" for c in comparators)
    lines = [
        f"# Evaluation: {run['dataset']} ({run['split']}) · {run['method']} · {run['model']}",
        "",
        f"Source `{run['source']}`; limit {run['limit']}, seed {run['seed']}.",
        f"{summary['questions']} questions run, {summary['evaluated']} scored; "
        f"{summary['gold_failed']} excluded because their gold SQL failed; "
        f"{summary['skipped_missing_db']} skipped in the dataset because their database is missing"
        + (f" ({', '.join(f'{db}: {k}' for db, k in summary['skipped_by_db'].items())})." if summary["skipped_by_db"] else "."),
        "",
        "## Execution accuracy",
        "",
        f"| difficulty | n | {head} |",
        "|---|---:|" + "---:|" * len(comparators),
    ]
    for level, row in summary["by_difficulty"].items():
        lines.append(f"| {level} | {row['n']} | " + " | ".join(_pct(row[c]) for c in comparators) + " |")
    lines.append(f"| **all** | {summary['evaluated']} | " + " | ".join(f"**{_pct(summary['ex'][c])}**" for c in comparators) + " |")
    lat, tok = summary["latency_s"], summary["tokens_per_question"]
    lines += [
        "",
        *_confidence_lines(summary["by_confidence"]),
        "## Errors",
        "",
        "| class | questions |",
        "|---|---:|",
        *(f"| {c} | {k} |" for c, k in summary["error_classes"].items()),
        "",
        f"Execution-error rate: {_pct(summary['execution_error_rate'])}.",
        "",
        "## Cost and candidates",
        "",
        f"- Latency per question: median {lat['median']} s, p90 {lat['p90']} s, mean {lat['mean']} s.",
        f"- Tokens per question: {tok['prompt']} prompt, {tok['completion']} completion.",
        f"- Candidates per question: {summary['candidates_per_question']}.",
        f"- Oracle (some executed candidate right, {primary}): {_pct(summary['oracle_rate'])}; "
        f"the selected SQL was right in {_pct(summary['selected_right_when_some_candidate_right'])} of those questions.",
        "",
    ]
    lines += _provenance_lines(summary["provenance"])
    if summary.get("generators"):
        lines += [
            "## Generators",
            "",
            "| generator | questions with a candidate | with a right candidate | only generator right |",
            "|---|---:|---:|---:|",
            *(f"| {name} | {g['questions']} | {g['right']} ({_pct(g['right_rate'])}) | {g['only_right']} |"
              for name, g in summary["generators"].items()),
            "",
        ]
    return "\n".join(lines)


def _provenance_lines(provenance: dict[str, Any]) -> list[str]:
    lines = ["## Runs", ""]
    for run in provenance["runs"]:
        answered = f"{run['questions']} question{'s' * (run['questions'] != 1)}"
        copied = f", copied from `{run['copied_from']}`" if run["copied_from"] else ""
        if not run["recorded"]:
            lines.append(f"- {answered} by a run that recorded no provenance{copied}.")
            continue
        weights = f" (SHA-256 {run['model_sha256'][:12]}…)" if run["model_sha256"] else ""
        lines.append(f"- {answered} by run {run['id']} on {run['date']}: commit {run['commit']}"
                     f"{' with uncommitted changes' if run['dirty'] else ''}, model {run['model']}{weights}{copied}.")
    if provenance["unrecorded"]:
        lines.append(f"- {provenance['unrecorded']} questions by runs that recorded no provenance.")
    return [*lines, "", "Each run's code, packages, model, data and machine are in run.json (`runs`).", ""]


def render_chart(summary: dict[str, Any], records: list[dict[str, Any]], path: Path) -> None:
    """Three panels: EX by difficulty per comparator, error classes, latency histogram (Agg, no display)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 4.5), layout="constrained")
    ex_ax, err_ax, lat_ax = fig.subplots(1, 3)
    groups = [*summary["by_difficulty"], "all"]
    width = 0.8 / len(COMPARATORS)
    for i, c in enumerate(COMPARATORS):
        values = [summary["by_difficulty"][g][c] for g in groups[:-1]] + [summary["ex"][c]]
        ex_ax.bar(np.arange(len(groups)) + i * width, [100 * (v or 0) for v in values], width, label=c)
    ex_ax.set_xticks(np.arange(len(groups)) + width * (len(COMPARATORS) - 1) / 2, groups)
    ex_ax.set_ylabel("EX (%)")
    ex_ax.set_ylim(0, 100)
    ex_ax.set_title("Execution accuracy")
    ex_ax.legend()
    classes = {c: k for c, k in summary["error_classes"].items() if k}
    err_ax.barh(list(classes), list(classes.values()), color="tab:red")
    err_ax.invert_yaxis()
    err_ax.set_title("Error classes (questions)")
    latencies = [r["latency_s"] for r in records if not r.get("gold_error")]
    lat_ax.hist(latencies, bins=min(30, max(len(latencies), 1)), color="tab:gray")
    lat_ax.set_xlabel("seconds")
    lat_ax.set_title(f"Latency (median {summary['latency_s']['median']} s)")
    run = summary["run"]
    fig.suptitle(f"{run['dataset']} {run['split']} · {run['method']} · {run['model']} · n={summary['evaluated']}")
    fig.savefig(path, dpi=100)


def write_report(out_dir: Path) -> dict[str, Any]:
    """Render report.md / report.json / report.png from `out_dir`'s results.jsonl and run.json."""
    out_dir = Path(out_dir)
    if not (out_dir / RESULTS_FILE).is_file():
        raise DatasetError(f"{out_dir} holds no {RESULTS_FILE}")
    meta = read_meta(out_dir)
    records = read_results(out_dir)
    try:
        summary = summarize(records, meta)
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{out_dir / RESULTS_FILE} is not an askchain results file (bad or missing field {exc})") from exc
    (out_dir / "report.json").write_text(json.dumps(summary, indent=2))
    (out_dir / "report.md").write_text(render_markdown(summary))
    render_chart(summary, records, out_dir / "report.png")
    return summary


def compare_runs(out_dirs: list[Path]) -> list[dict[str, Any]]:
    """Each run's summary restricted to the questions every run has answered (their gold queries ran), so methods
    are compared on the same questions even while some runs are unfinished."""
    runs = []
    for out_dir in map(Path, out_dirs):
        runs.append((out_dir, read_meta(out_dir), read_results(out_dir)))
    common = set.intersection(*({r["id"] for r in records if not r.get("gold_error")} for _, _, records in runs))
    return [
        {"results": str(out_dir), **summarize([r for r in records if r["id"] in common], meta)}
        for out_dir, meta, records in runs
    ]


def render_comparison(summaries: list[dict[str, Any]]) -> str:
    """A Markdown table of the methods side by side."""
    primary = summaries[0]["primary_comparator"]
    lines = [
        f"{summaries[0]['evaluated']} questions answered by every run; EX scored {primary}-style.",
        "",
        "| method | model | EX | exec. errors | some candidate right | selected right when some was "
        "| latency median / mean / p90 | tokens per question (prompt + completion) | runs: commit, model, date |",
        "|---|---|---:|---:|---:|---:|---|---|---|",
    ]
    for s in summaries:
        lat, tok = s["latency_s"], s["tokens_per_question"]
        lines.append(
            f"| {s['run']['method']} | {s['run']['model']} | {_pct(s['ex'][primary])} | {_pct(s['execution_error_rate'])} "
            f"| {_pct(s['oracle_rate'])} | {_pct(s['selected_right_when_some_candidate_right'])} "
            f"| {lat['median']} / {lat['mean']} / {lat['p90']} s | {tok['prompt']:.0f} + {tok['completion']:.0f} "
            f"| {provenance_brief(s['provenance'])} |"
        )
    return "\n".join(lines) + "\n"
