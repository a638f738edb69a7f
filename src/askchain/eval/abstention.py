"""`askchain eval abstention`: does a method abstain on the questions its data cannot answer, and only on those?

Four question sets: the unanswerable Ethereum questions (domains/ethereum/eval/unanswerable.jsonl, over the local
Ethereum dataset), the unanswerable general ones over Spider dev databases in the style of defog's "idk" questions
(eval/questions/unanswerable_spider.jsonl), and samples of answerable ones: Spider dev and the Ethereum questions.
The report gives the abstention rate on the first two, the false-abstention rate on the others, and EX per confidence
level on the answerable questions answered (high should be right far more often than low). Results go to one
resumable results.jsonl with a run.json and report.md / report.json, like the other evaluations.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from askchain.config import Settings
from askchain.errors import DatasetError
from askchain.eval.datasets import Dataset, Example, load_domain_questions, load_spider, question_lines
from askchain.eval.provenance import dataset_provenance, model_label, run_entry
from askchain.eval.report import by_confidence
from askchain.eval.results import META_FILE, RESULTS_FILE, RUN_KEY, read_meta, read_results, write_meta
from askchain.eval.runner import evaluate_example, select_examples
from askchain.llm.base import ChatModel

HERE = Path(__file__).parent
SPIDER_UNANSWERABLE = HERE / "questions" / "unanswerable_spider.jsonl"
#: The domain whose unanswerable and answerable questions are two of the four sets.
ETH_DOMAIN = "ethereum"
#: run.json's "dataset" of an abstention run, whose folder has its own report.
DATASET = "abstention"


@dataclass
class QuestionSet:
    name: str
    answerable: bool
    dataset: Dataset
    #: id -> why the data cannot answer it and the concept it lacks (unanswerable sets)
    reasons: dict[str, dict[str, str]]


def read_unanswerable(path: Path, default_db: str | None = None) -> tuple[list[Example], dict[str, dict[str, str]]]:
    """Unanswerable questions as JSON lines {id, question, reason, db_id (or the domain's), concept?}."""
    examples, reasons = [], {}
    for n, entry in question_lines(path):
        db_id = (entry.get("db_id") if isinstance(entry, dict) else None) or default_db
        if not (isinstance(entry, dict) and entry.get("id") and entry.get("question") and entry.get("reason") and db_id):
            raise DatasetError(f"{path}:{n} needs id, question, reason and db_id")
        examples.append(Example(str(entry["id"]), db_id, entry["question"], gold_sql=""))
        reasons[str(entry["id"])] = {"reason": entry["reason"], "concept": entry.get("concept") or ""}
    return examples, reasons


def question_sets(spider_root: Path) -> list[QuestionSet]:
    """The two unanswerable sets and the two answerable datasets they are measured against."""
    from askchain.domain import get_domain

    domain = get_domain(ETH_DOMAIN)
    spider, eth = load_spider(spider_root, "dev"), load_domain_questions(domain)
    eth_file = domain.unanswerable_file
    if eth_file is None:
        raise DatasetError(f"the {ETH_DOMAIN} domain declares no unanswerable_file")
    sets = []
    for name, path, answerable_set, default_db in (
        ("eth-unanswerable", eth_file, eth, domain.name), ("spider-unanswerable", SPIDER_UNANSWERABLE, spider, None),
    ):
        examples, reasons = read_unanswerable(path, default_db)
        unknown = sorted({e.db_id for e in examples} - {e.db_id for e in answerable_set.examples})
        if unknown:
            raise DatasetError(f"{path} names databases {answerable_set.name} lacks: {', '.join(unknown)}")
        data = Dataset(name, "default", str(path), examples, answerable_set.connect, answerable_set.comparator)
        sets.append(QuestionSet(name, False, data, reasons))
    return sets + [QuestionSet("spider", True, spider, {}), QuestionSet("eth", True, eth, {})]


def default_out_dir(method: str, model: str, limit: int | None, seed: int) -> Path:
    name = f"abstention-{method}-{model}-{limit if limit is not None else 'all'}-{seed}"
    return Path("runs") / "eval" / re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def ask_unanswerable(example: Example, reasons: dict[str, str], engine, model: ChatModel, method: str,
                     settings: Settings) -> dict[str, Any]:
    """Ask one question the data cannot answer; the record says whether, and why, it abstained."""
    from askchain.api import ask

    result = ask(example.question, engine, method=method, model=model, settings=settings, answer=False)
    return {
        "id": example.id, "db_id": example.db_id, "question": example.question, **reasons,
        "abstained": result.abstained, "why": result.abstention_reason,
        "answer": result.answer if result.abstained else None, "sql": result.sql, "error": result.error,
        "confidence": result.confidence, "latency_s": result.elapsed_s,
        "prompt_tokens": result.usage.get("prompt_tokens", 0), "completion_tokens": result.usage.get("completion_tokens", 0),
        "run_id": result.run_id,
    }


def run_abstention(
    spider_root: Path, method: str, model: str | ChatModel, settings: Settings, limit: int | None, seed: int,
    out_dir: Path | None = None, sets: list[QuestionSet] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """Ask every set's sample (`limit` questions of each, drawn with `seed`), append to results.jsonl, write the report.
    A question already in results.jsonl is not asked again."""
    from askchain.eval.runner import _method_settings
    from askchain.resources import process_resources

    sets = sets if sets is not None else question_sets(spider_root)
    model_name = model.model_id if isinstance(model, ChatModel) else model
    out_dir = Path(out_dir or default_out_dir(method, model_name, limit, seed))
    meta = {"dataset": DATASET, "method": method, "model": model_label(model_name), "limit": limit, "seed": seed,
            "sets": [s.name for s in sets], "pipeline_settings": _method_settings(settings, method)}
    previous = read_meta(out_dir)
    if previous and any(previous.get(k) != meta[k] for k in ("method", "model", "limit", "seed", "pipeline_settings")):
        raise DatasetError(f"{out_dir} holds another abstention run; choose another --out")
    done = {(r["set"], r["id"]) for r in read_results(out_dir)}
    chosen = [(s, e) for s in sets for e in select_examples(s.dataset.examples, limit, seed) if (s.name, e.id) not in done]
    out_dir.mkdir(parents=True, exist_ok=True)
    if chosen:
        chat_model = model if isinstance(model, ChatModel) else process_resources().model(model_name, settings)
        provenance = {s.name: dataset_provenance(s.name, s.dataset.split, s.dataset.source, limit, seed, None, settings)
                      for s in sets}
        current = run_entry(model_name, getattr(chat_model, "path", None), provenance, settings, out_dir)
        meta["runs"] = (previous.get("runs") or []) + [current]
        write_meta(out_dir, meta)
        engines: dict[tuple[str, str], Any] = {}
        with open(out_dir / RESULTS_FILE, "a", encoding="utf-8") as sink:
            for qset, example in chosen:
                key = (qset.name, example.db_id)
                if key not in engines:
                    engines[key] = qset.dataset.connect(example.db_id, settings)
                if qset.answerable:
                    record = evaluate_example(example, engines[key], chat_model, method, settings, qset.dataset.comparator)
                    record["comparator"] = qset.dataset.comparator
                else:
                    record = ask_unanswerable(example, qset.reasons[example.id], engines[key], chat_model, method, settings)
                record.update({"set": qset.name, "answerable": qset.answerable, RUN_KEY: current["id"]})
                sink.write(json.dumps(record, default=str) + "\n")
                sink.flush()
                if on_record:
                    on_record(record)
    elif not previous:
        write_meta(out_dir, meta)
    write_abstention_report(out_dir)
    return out_dir


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def summarize_abstention(records: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """Abstention rate (unanswerable), false-abstention rate (answerable) and EX per confidence level (answerable)."""
    unanswerable = [r for r in records if not r["answerable"]]
    answerable = [r for r in records if r["answerable"] and not r.get("gold_error")]
    by_set: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r["set"] for r in records):
        rs = [r for r in unanswerable + answerable if r["set"] == name]
        by_set[name] = {"n": len(rs), "abstained": sum(bool(r.get("abstained")) for r in rs),
                        "rate": _rate(sum(bool(r.get("abstained")) for r in rs), len(rs))}
        if rs and rs[0]["answerable"]:
            by_set[name]["confidence"] = by_confidence(rs, rs[0]["comparator"])
    # each answerable record scored by its own set's comparator, so the sets can be pooled
    pooled = [{**r, "correct": {"primary": r["correct"][r["comparator"]]}} for r in answerable]
    latencies = [r["latency_s"] for r in records if r.get("latency_s") is not None]
    return {
        "run": {k: meta.get(k) for k in ("method", "model", "limit", "seed")},
        "unanswerable": {"n": len(unanswerable), "abstained": sum(bool(r["abstained"]) for r in unanswerable),
                         "abstention_rate": _rate(sum(bool(r["abstained"]) for r in unanswerable), len(unanswerable))},
        "answerable": {"n": len(answerable), "abstained": sum(bool(r.get("abstained")) for r in answerable),
                       "false_abstention_rate": _rate(sum(bool(r.get("abstained")) for r in answerable), len(answerable)),
                       "ex": _rate(sum(r["correct"]["primary"] for r in pooled), len(pooled)),
                       "confidence": by_confidence(pooled, "primary")},
        "sets": by_set,
        "gold_failed": sum(bool(r.get("gold_error")) for r in records if r["answerable"]),
        "latency_s": {"median": round(statistics.median(latencies), 3) if latencies else None},
        "abstentions": [{"set": r["set"], "id": r["id"], "question": r["question"], "why": r["why"]}
                        for r in unanswerable if r["abstained"]],
        "missed": [{"set": r["set"], "id": r["id"], "question": r["question"]} for r in unanswerable if not r["abstained"]],
        "false_abstentions": [{"set": r["set"], "id": r["id"], "question": r["question"], "why": r.get("why")}
                              for r in answerable if r.get("abstained")],
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def render_abstention(summary: dict[str, Any]) -> str:
    run, un, an = summary["run"], summary["unanswerable"], summary["answerable"]
    lines = [
        f"# Abstention: {run['method']} · {run['model']}",
        "",
        f"Limit {run['limit']} per set, seed {run['seed']}.",
        "",
        f"- Abstained on **{un['abstained']} of {un['n']}** unanswerable questions ({_pct(un['abstention_rate'])}).",
        f"- Abstained on **{an['abstained']} of {an['n']}** answerable questions (false abstentions, "
        f"{_pct(an['false_abstention_rate'])}); EX {_pct(an['ex'])}"
        + (f"; {summary['gold_failed']} left out because their gold SQL failed." if summary["gold_failed"] else "."),
        "",
        "| set | questions | abstained | rate |",
        "|---|---:|---:|---:|",
        *(f"| {name} | {s['n']} | {s['abstained']} | {_pct(s['rate'])} |" for name, s in summary["sets"].items()),
        "",
        "## EX by confidence (answerable questions answered)",
        "",
        "| set | " + " | ".join(f"{level} (n) | EX {level}" for level in ("high", "medium", "low")) + " |",
        "|---|" + "---:|" * 6,
    ]
    rows = [("all answerable", an["confidence"])]
    rows += [(name, s["confidence"]) for name, s in summary["sets"].items() if "confidence" in s]
    for name, levels in rows:
        cells = [f"{levels.get(lv, {}).get('n', 0)} | {_pct(levels.get(lv, {}).get('ex'))}" for lv in ("high", "medium", "low")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"Median latency {summary['latency_s']['median']} s.", ""]
    if summary["abstentions"]:
        lines += ["## Abstentions on unanswerable questions", "",
                  *(f"- {m['set']} {m['id']}: {m['question']} ({m['why']})" for m in summary["abstentions"]), ""]
    if summary["missed"]:
        lines += ["## Unanswerable questions answered anyway", "", *(f"- {m['set']} {m['id']}: {m['question']}"
                                                                   for m in summary["missed"]), ""]
    if summary["false_abstentions"]:
        lines += ["## False abstentions", "", *(f"- {m['set']} {m['id']}: {m['question']}"
                                                + (f" ({m['why']})" if m["why"] else "")
                                                for m in summary["false_abstentions"]), ""]
    return "\n".join(lines)


def write_abstention_report(out_dir: Path) -> dict[str, Any]:
    out_dir = Path(out_dir)
    if not (out_dir / RESULTS_FILE).is_file():
        raise DatasetError(f"{out_dir} holds no {RESULTS_FILE}")
    records = read_results(out_dir)
    try:
        summary = summarize_abstention(records, read_meta(out_dir))
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{out_dir / RESULTS_FILE} is not an abstention results file (bad field {exc})") from exc
    (out_dir / "report.json").write_text(json.dumps(summary, indent=2))
    (out_dir / "report.md").write_text(render_abstention(summary))
    return summary
