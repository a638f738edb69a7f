"""Benchmarks with provenance: each run records code, packages, model, data and machine, relative to the repository;
a folder assembled from several runs says which question came from which; folders from before still load."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest

from askchain.config import get_settings
from askchain.db.duckdb import DuckDBEngine
from askchain.db.sqlite import SQLiteEngine
from askchain.errors import DatasetError
from askchain.eval import abstention
from askchain.eval.datasets import load_spider, reload_dataset
from askchain.eval.provenance import (
    KEY_PACKAGES, database_build, from_repo, model_provenance, package_version, repo_relative, repo_root,
)
from askchain.eval.report import compare_runs, provenance_brief, render_comparison, write_report
from askchain.eval.results import META_FILE, RESULTS_FILE, RUN_KEY, read_meta, read_results
from askchain.eval.runner import run_eval, select_examples
from askchain.llm.fake import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [
    ("How many items are there?", "SELECT count(*) FROM items"),
    ("What is the most expensive item's name?", "SELECT name FROM items ORDER BY price DESC LIMIT 1"),
    ("List the names of items cheaper than 5.", "SELECT name FROM items WHERE price < 5"),
    ("What is the total price of all items?", "SELECT sum(price) FROM items"),
]


@pytest.fixture
def shop(tmp_path):
    """A Spider-format dataset of its own: four questions over one small SQLite database."""
    root = tmp_path / "shop_data"
    (root / "database" / "shop").mkdir(parents=True)
    with sqlite3.connect(root / "database" / "shop" / "shop.sqlite") as con:
        con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        con.executemany("INSERT INTO items VALUES (?, ?, ?)", [(1, "pen", 2.5), (2, "lamp", 30.0), (3, "mug", 8.0)])
    (root / "dev.json").write_text(json.dumps([{"db_id": "shop", "question": q, "query": sql} for q, sql in QUESTIONS]))
    return load_spider(root)


def answering_gold():
    """A scripted model that replies with the gold SQL of the question in its prompt."""
    return ScriptedModel(lambda request, i: next(sql for q, sql in QUESTIONS if q in request.messages[-1][1]))


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def test_a_run_records_its_provenance_with_paths_relative_to_the_repository(shop, tmp_path):
    run_eval(shop, "baseline", answering_gold(), get_settings(), limit=3, seed=1, out_dir=tmp_path / "run", first=2)
    meta = read_meta(tmp_path / "run")
    [entry] = meta["runs"]

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert entry["commit"] == head and isinstance(entry["dirty"], bool)
    assert all(not Path(f).is_absolute() for f in entry["changed_files"])
    assert entry["askchain"] and entry["askchain"] == package_version("askchain")
    assert set(entry["packages"]) == set(KEY_PACKAGES)
    assert entry["packages"]["sqlglot"] and entry["packages"]["duckdb"] and entry["packages"]["pydantic"]
    assert entry["model"] == {"id": "fake:scripted", "file": None, "sha256": None}
    assert entry["dataset"] == {
        "name": "spider", "split": "dev", "file": repo_relative(shop.source),
        "sha256": hashlib.sha256(Path(shop.source).read_bytes()).hexdigest(), "limit": 3, "seed": 1, "first": 2,
    }
    assert entry["databases"] == {}  # a plain SQLite file carries no build record
    assert entry["machine"]["cores"] >= 1 and entry["machine"]["cpu"]
    assert entry["machine"]["avx512"] in (True, False, None)
    assert datetime.fromisoformat(entry["date"]).tzinfo is not None

    assert not any(s.startswith("/") for s in _strings(meta)), "run.json must name no absolute path"
    assert from_repo(meta["source"]).resolve() == Path(shop.source).resolve()
    assert [r[RUN_KEY] for r in read_results(tmp_path / "run")] == [entry["id"]] * 2


def test_a_resumed_run_adds_an_entry_and_marks_its_questions(shop, tmp_path):
    out = tmp_path / "run"
    model = answering_gold()
    chosen = select_examples(shop.examples, 3, seed=1)
    run_eval(shop, "baseline", model, get_settings(), limit=3, seed=1, out_dir=out, first=2)
    run_eval(shop, "baseline", model, get_settings(), limit=3, seed=1, out_dir=out)
    run_eval(shop, "baseline", model, get_settings(), limit=3, seed=1, out_dir=out)  # nothing left to ask: no entry

    first, second = read_meta(out)["runs"]
    assert (first["dataset"]["first"], second["dataset"]["first"]) == (2, None) and first["id"] != second["id"]
    records = read_results(out)
    assert [(r["id"], r[RUN_KEY]) for r in records] == [
        (chosen[0].id, first["id"]), (chosen[1].id, first["id"]), (chosen[2].id, second["id"]),
    ]
    report = json.loads((out / "report.json").read_text())
    answered = [(run["id"], run["questions"]) for run in report["provenance"]["runs"]]
    assert answered == [(first["id"], 2), (second["id"], 1)]
    assert report["provenance"]["unrecorded"] == 0
    markdown = (out / "report.md").read_text()
    assert f"2 questions by run {first['id']}" in markdown and f"1 question by run {second['id']}" in markdown


def test_reused_answers_keep_the_run_that_made_them(shop, tmp_path):
    lender = tmp_path / "seed-1"
    run_eval(shop, "baseline", answering_gold(), get_settings(), limit=3, seed=1, out_dir=lender)
    [lender_run] = read_meta(lender)["runs"]
    lent = {r["id"] for r in read_results(lender)}
    rerun = sorted(lent)[0]

    model = answering_gold()
    run = run_eval(shop, "baseline", model, get_settings(), out_dir=tmp_path / "all", reuse=[lender], rerun=[rerun])
    copied_entry, current = read_meta(tmp_path / "all")["runs"]
    assert copied_entry == {**lender_run, "copied_from": repo_relative(lender)}
    assert len(model.requests) == len(QUESTIONS) - len(lent) + 1  # the rerun question and those the lender lacks
    by_run = {r["id"]: r[RUN_KEY] for r in run.records}
    assert by_run == {e.id: lender_run["id"] if e.id in lent - {rerun} else current["id"] for e in shop.examples}
    assert "copied from" in (tmp_path / "all" / "report.md").read_text()

    with pytest.raises(DatasetError, match=r"run of something else \(method=baseline"):
        run_eval(shop, "self-consistency", answering_gold(), get_settings(), out_dir=tmp_path / "sc", reuse=[lender])
    with pytest.raises(DatasetError, match="no answers to reuse"):
        run_eval(shop, "baseline", answering_gold(), get_settings(), out_dir=tmp_path / "x", reuse=[tmp_path / "none"])


def test_rows_copied_from_a_folder_without_provenance_say_so(shop, tmp_path):
    lender = tmp_path / "old"
    run_eval(shop, "baseline", answering_gold(), get_settings(), limit=2, seed=1, out_dir=lender)
    _as_before_provenance(lender)
    run_eval(shop, "baseline", answering_gold(), get_settings(), out_dir=tmp_path / "new", reuse=[lender])
    copied, _ = read_meta(tmp_path / "new")["runs"]
    assert copied["recorded"] is False and copied["copied_from"] == repo_relative(lender)
    markdown = (tmp_path / "new" / "report.md").read_text()
    assert "2 questions by a run that recorded no provenance, copied from" in markdown


def _as_before_provenance(folder: Path) -> None:
    """Rewrite a results folder as the runner wrote it before provenance: absolute source, no runs, no marks."""
    meta = read_meta(folder)
    meta.pop("runs")
    meta["source"] = str(from_repo(meta["source"]).resolve())
    (folder / META_FILE).write_text(json.dumps(meta))
    records = [{k: v for k, v in r.items() if k != RUN_KEY} for r in read_results(folder)]
    (folder / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))


def test_folders_from_before_provenance_still_load_and_resume(shop, tmp_path):
    out = tmp_path / "run"
    run_eval(shop, "baseline", answering_gold(), get_settings(), limit=3, seed=1, out_dir=out, first=2)
    _as_before_provenance(out)

    assert write_report(out)["provenance"] == {"runs": [], "unrecorded": 2}
    assert "2 questions by runs that recorded no provenance" in (out / "report.md").read_text()
    assert [e.id for e in reload_dataset(read_meta(out)).examples] == [e.id for e in shop.examples]

    run_eval(shop, "baseline", answering_gold(), get_settings(), limit=3, seed=1, out_dir=out)
    [entry] = read_meta(out)["runs"]
    assert write_report(out)["provenance"]["unrecorded"] == 2
    assert [run["questions"] for run in write_report(out)["provenance"]["runs"]] == [1]
    assert [e.id for e in reload_dataset(read_meta(out)).examples] == [e.id for e in shop.examples]
    assert "not recorded (2 q.)" in provenance_brief(write_report(out)["provenance"])


#: One kept results folder per benchmark sample (the first method's, by name); abstention runs apart (their own report).
KEPT_ALL = sorted({p.parent.parent: p.parent for p in sorted((REPO / "benchmarks").glob("*/*/run.json"), reverse=True)}.values())
KEPT_ABSTENTION = [folder for folder in KEPT_ALL if read_meta(folder).get("dataset") == abstention.DATASET]
KEPT = [folder for folder in KEPT_ALL if folder not in KEPT_ABSTENTION]


@pytest.mark.parametrize("folder", KEPT, ids=lambda folder: f"{folder.parent.name}/{folder.name}")
def test_kept_benchmark_folders_render(folder, tmp_path):
    copy = tmp_path / folder.name
    copy.mkdir()
    for name in (META_FILE, RESULTS_FILE):
        (copy / name).write_bytes((folder / name).read_bytes())
    summary = write_report(copy)
    assert summary["evaluated"] > 0
    assert sum(run["questions"] for run in summary["provenance"]["runs"]) + summary["provenance"]["unrecorded"] == (
        summary["questions"]
    )


def test_compare_shows_each_runs_commit_and_date(shop, tmp_path):
    for method in ("baseline", "self-consistency"):
        run_eval(shop, method, answering_gold(), get_settings(), limit=2, seed=1, out_dir=tmp_path / method)
    table = render_comparison(compare_runs([tmp_path / "baseline", tmp_path / "self-consistency"]))
    rows = [line for line in table.splitlines() if line.startswith(("| baseline", "| self-consistency"))]
    for method, row in zip(("baseline", "self-consistency"), rows):
        [run] = read_meta(tmp_path / method)["runs"]
        assert row.endswith(f"| {run['commit'][:7]}{'*' if run['dirty'] else ''} no model hash {run['date'][:10]} |")


# commit, dirty, model hash, date, questions, recorded
A = ("abcdef0123", False, "cc324af070c2", "2026-11-24T10:00:00+00:00", 5, True)
B = ("1234567abc", False, "cc324af070c2", "2026-11-25T08:00:00+00:00", 2, True)
UNRECORDED = (None, None, None, None, 1, False)


@pytest.mark.parametrize(
    "runs, unrecorded, expected",
    [
        ([A], 0, "abcdef0 cc324af0 2026-11-24"),
        ([(A[0], True, *A[2:])], 0, "abcdef0* cc324af0 2026-11-24"),
        ([(None, None, None, *A[3:])], 0, "no commit no model hash 2026-11-24"),
        ([], 7, "not recorded"),
        ([A, B], 3, "abcdef0 cc324af0 2026-11-24 (5 q.); 1234567 cc324af0 2026-11-25 (2 q.); not recorded (3 q.)"),
        ([A, (*A[:4], 2, True), UNRECORDED], 0, "abcdef0 cc324af0 2026-11-24 (7 q.); not recorded (1 q.)"),
    ],
)
def test_provenance_in_one_cell(runs, unrecorded, expected):
    keys = ("commit", "dirty", "model_sha256", "date", "questions", "recorded")
    assert provenance_brief({"runs": [dict(zip(keys, run)) for run in runs], "unrecorded": unrecorded}) == expected


def test_a_gguf_file_is_hashed_once_per_version(tmp_path):
    settings = get_settings().with_overrides(paths={"cache_dir": str(tmp_path / "cache")})
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    expected = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert model_provenance(str(weights), None, settings) == {
        "id": repo_relative(weights), "file": repo_relative(weights), "sha256": expected,
    }
    cache_file = tmp_path / "cache" / "file_sha256.json"
    remembered = json.loads(cache_file.read_text())
    remembered[str(weights.resolve())]["sha256"] = "remembered"
    cache_file.write_text(json.dumps(remembered))
    assert model_provenance(str(weights), None, settings)["sha256"] == "remembered"  # same size and mtime: not reread

    weights.write_bytes(b"GGUF" + b"other weights")
    assert model_provenance(str(weights), None, settings)["sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()


def test_embedded_models_use_their_known_hash():
    from askchain.llm.registry import named_models

    for name, spec in named_models().items():
        for model_id in (name, f"llamacpp:{name}"):
            assert model_provenance(model_id, None, get_settings()) == {
                "id": model_id, "file": spec["embedded"]["file_name"], "sha256": spec["embedded"]["sha256"],
            }
    assert model_provenance("openai:gpt-4o-mini", None, get_settings())["sha256"] is None


@pytest.fixture(scope="module")
def small_ethereum(tmp_path_factory) -> Path:
    """A one-day local Ethereum dataset, built by the domain's builder (which keeps its build record beside it)."""
    from askchain.domains.ethereum.dataset import build_dataset

    path = tmp_path_factory.mktemp("eth") / "crypto_ethereum.duckdb"
    build_dataset(path, days=1, end=date(2026, 1, 31), seed=3, progress=False)
    return path


def test_an_ethereum_run_records_the_datasets_build_and_end_date(shop, small_ethereum, tmp_path):
    engine = DuckDBEngine(str(small_ethereum), get_settings().db)
    assert database_build(engine)["build"]["end"] == "2026-01-31"
    shop_db = Path(shop.source).parent / "database" / "shop" / "shop.sqlite"
    assert database_build(SQLiteEngine(str(shop_db), get_settings().db)) is None

    count_blocks = "SELECT count(*) FROM blocks"
    example = replace(shop.examples[0], db_id="ethereum", question=QUESTIONS[0][0], gold_sql=count_blocks)
    dataset = replace(shop, name="eth", examples=[example], connect=lambda db_id, settings: engine)
    model = ScriptedModel(lambda request, i: count_blocks)
    run_eval(dataset, "baseline", model, get_settings(), out_dir=tmp_path / "eth")
    [entry] = read_meta(tmp_path / "eth")["runs"]
    recorded = entry["databases"]["ethereum"]
    assert recorded["file"] == repo_relative(small_ethereum)
    assert {k: recorded["build"][k] for k in ("end", "days", "seed")} == {"end": "2026-01-31", "days": 1, "seed": 3}
    assert recorded["build"]["rows"]["blocks"] > 0


def test_repo_root_is_this_checkout():
    assert repo_root() == REPO


@pytest.mark.parametrize("folder", KEPT_ABSTENTION, ids=lambda folder: f"{folder.parent.name}/{folder.name}")
def test_kept_abstention_folders_render(folder, tmp_path):
    copy = tmp_path / folder.name
    copy.mkdir()
    for name in (META_FILE, RESULTS_FILE):
        (copy / name).write_bytes((folder / name).read_bytes())
    summary = abstention.write_abstention_report(copy)
    assert summary["unanswerable"]["n"] > 0 and summary["answerable"]["n"] > 0
