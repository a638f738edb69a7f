"""Evaluation datasets as plain data: questions with gold SQL, and how to open each question's database.

Loaders read Spider-format (`<split>.json` + `database/<db>/<db>.sqlite`), BIRD-format (`dev/dev.json` or
`minidev/mini_dev_sqlite.json` + `dev_databases/<db>/<db>.sqlite`) and each installed domain's evaluation set
(named by the domain's command word). Questions whose database is absent are skipped and counted per
database.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from askchain.config import Settings, shared_data_dir
from askchain.db.base import Engine
from askchain.domain import Domain, all_domains, get_domain
from askchain.errors import DatasetError
from askchain.eval.hardness import spider_hardness

Connect = Callable[[str, Settings], Engine]


@dataclass(frozen=True)
class Example:
    id: str
    db_id: str
    question: str
    gold_sql: str
    difficulty: str | None = None
    hint: str = ""  # external knowledge passed to the method (BIRD's evidence)
    #: Whether row order is part of the answer (Spider's rule: the gold query says ORDER BY).
    order_matters: bool = False
    #: The gold columns the answer is judged on (Spider 2.0's condition columns); empty: all of them. A column the
    #: question leaves to the answerer, such as a bucket's label, is left out.
    judged_columns: tuple[str, ...] = ()
    category: str | None = None
    #: Whether retrieval leaves the question's whole database out of the example pool: Spider's and BIRD's databases
    #: are meant to be unseen. A domain's questions keep its examples, which the domain ships for exactly these
    #: questions (the evaluated question itself is always left out).
    hold_out_db: bool = True


@dataclass
class Dataset:
    name: str
    split: str
    source: str
    examples: list[Example]
    connect: Connect  # (db_id, settings) -> an open Engine
    comparator: str  # the primary comparator's name in askchain.eval.compare.COMPARATORS
    #: db_id -> number of questions skipped because that database is missing.
    skipped: dict[str, int] = field(default_factory=dict)
    #: The question bank's splits kept out of the example pool while this set is evaluated (its own split).
    examples_held_out: tuple[str, ...] = ()

    def holding_out(self, settings: Settings) -> Settings:
        """`settings` with this set's held-out splits added to those retrieval never shows as examples."""
        if not self.examples_held_out:
            return settings
        held_out = list(dict.fromkeys([*settings.pipeline.examples_held_out, *self.examples_held_out]))
        pipeline = settings.pipeline.model_copy(update={"examples_held_out": held_out})
        return settings.model_copy(update={"pipeline": pipeline})


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc


def _entries(path: Path, keys: tuple[str, ...]) -> list[dict]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path} must hold a JSON list of questions")
    for i, entry in enumerate(data):
        missing = [k for k in keys if not isinstance(entry, dict) or not isinstance(entry.get(k), str)]
        if missing:
            raise DatasetError(f"{path}: question {i} lacks text field(s) {', '.join(missing)}")
    return data


def _sqlite_files(entries: list[dict], folders: list[Path]) -> dict[str, Path]:
    """db_id -> the first `<folder>/<db>/<db>.sqlite` found, for every db_id the questions use."""
    found = {}
    for db_id in {e["db_id"] for e in entries}:
        path = next((f / db_id / f"{db_id}.sqlite" for f in folders if (f / db_id / f"{db_id}.sqlite").is_file()), None)
        if path:
            found[db_id] = path
    return found


def _file_dataset(name: str, split: str, source: Path, examples: list[Example], files: dict[str, Path], comparator: str) -> Dataset:
    from askchain.db.connect import open_database

    usable = [e for e in examples if e.db_id in files]
    skipped: dict[str, int] = {}
    for e in examples:
        if e.db_id not in files:
            skipped[e.db_id] = skipped.get(e.db_id, 0) + 1
    if examples and not usable:
        raise DatasetError(f"none of the {len(examples)} questions in {source} has its database beside it")
    return Dataset(
        name, split, str(source), usable, lambda db_id, settings: open_database(str(files[db_id]), settings.db), comparator, skipped
    )


def _order_matters(sql: str) -> bool:
    """The Spider test-suite rule: order counts when the gold query contains ORDER BY."""
    return "order by" in " ".join(sql.lower().split())


def load_spider(root: Path, split: str = "dev") -> Dataset:
    """Spider format; databases from `database/`, else `database_reconstructed/` (a partial rebuild)."""
    path = Path(root) / f"{split}.json"
    entries = _entries(path, ("db_id", "question", "query"))
    examples = [
        Example(
            id=f"spider-{split}-{i:04d}",
            db_id=e["db_id"],
            question=e["question"],
            gold_sql=e["query"],
            difficulty=spider_hardness(e["query"]) or "unknown",
            order_matters=_order_matters(e["query"]),
        )
        for i, e in enumerate(entries)
    ]
    files = _sqlite_files(entries, [Path(root) / "database", Path(root) / "database_reconstructed"])
    return _file_dataset("spider", split, path, examples, files, "spider")


BIRD_SPLITS = {"dev": "dev/dev.json", "minidev": "minidev/mini_dev_sqlite.json"}


def load_bird(root: Path, split: str = "dev") -> Dataset:
    """BIRD format; the evidence becomes the hint, databases come from `dev_databases/`."""
    if split not in BIRD_SPLITS:
        raise DatasetError(f"unknown BIRD split '{split}': use one of {', '.join(BIRD_SPLITS)}")
    path = Path(root) / BIRD_SPLITS[split]
    entries = _entries(path, ("db_id", "question", "SQL"))
    examples = [
        Example(
            id=f"bird-{split}-{e.get('question_id', i)}",
            db_id=e["db_id"],
            question=e["question"],
            gold_sql=e["SQL"],
            difficulty=e.get("difficulty") or "unknown",
            hint=e.get("evidence") or "",
            order_matters=_order_matters(e["SQL"]),
        )
        for i, e in enumerate(entries)
    ]
    files = _sqlite_files(entries, [Path(root) / "dev_databases"])
    return _file_dataset("bird", split, path, examples, files, "bird")


#: The rows of a question file that are its evaluation set when rows say which `split` they are in: `dev`, what work
#: is tuned on; `test` is run only at milestones.
EVALUATED_SPLIT = "dev"
#: Splits that are never examples anyway (`test`), or are the example pool itself or more than one split.
_NOT_HELD_OUT = {"test", "pool", "all", "default"}


def question_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """A question file's JSON lines with their line numbers; a missing file or a bad line is a one-line error."""
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{n} is not valid JSON: {exc.msg}") from exc


def load_domain_questions(domain: Domain | str, path: Path | None = None, split: str = EVALUATED_SPLIT) -> Dataset:
    """A domain's evaluation set (or the questions file `path`) over its local dataset, scored Spider 2.0-style.

    A file whose rows carry `split` (a question bank: `test` rows are held-out template families, `pool` rows the
    examples retrieval may show, `dev` rows examples too except while they are evaluated) is evaluated on the rows
    of `split` (`all`: every row); a file without splits is evaluated whole. Only a file of the domain's example pool
    has its evaluated split held out of the examples: another file's questions (the multi-step sets) are no examples,
    so its dev rows are evaluated with the examples its test rows are. `domain` is an installed domain or its id."""
    domain = get_domain(domain) if isinstance(domain, str) else domain
    path = Path(path) if path else domain.eval_file
    examples = []
    for n, e in question_lines(path):
        missing = [k for k in ("id", "question", "gold_sql") if not isinstance(e, dict) or e.get(k) in (None, "")]
        if missing:
            raise DatasetError(f"{path}:{n} lacks field(s) {', '.join(missing)}")
        if "split" in e and split not in ("all", "default", e["split"]):  # default: results made before the bank
            continue
        examples.append(
            Example(
                id=str(e["id"]),
                db_id=domain.name,
                question=e["question"],
                gold_sql=e["gold_sql"],
                difficulty=e.get("difficulty") or "unknown",
                order_matters=bool(e.get("order_matters", False)),
                judged_columns=tuple(e.get("judged_columns", ())),
                category=e.get("category"),
                hold_out_db=False,
            )
        )
    if not examples:
        raise DatasetError(f"{path} holds no questions of split '{split}'")
    return Dataset(
        domain.command, split, str(path), examples, lambda db_id, settings: domain.default_database(settings), "spider2",
        examples_held_out=() if split in _NOT_HELD_OUT or not _in_pool(domain, path) else (split,),
    )


def _in_pool(domain: Domain, path: Path) -> bool:
    """Whether `path` is one of the files the domain's example pool is read from."""
    return path.resolve() in {Path(f).resolve() for f in domain.example_files}


#: The shared-data benchmarks; domains' evaluation sets are found by their command word.
LOADERS: dict[str, Callable[..., Dataset]] = {"spider": load_spider, "bird": load_bird}


def dataset_names() -> list[str]:
    return [*LOADERS, *(domain.command for domain in all_domains())]


def _loader(name: str, where: str = "") -> Callable[..., Dataset]:
    """Spider's or BIRD's loader, or the loader of the evaluation set of the domain whose command word is `name`."""
    if name in LOADERS:
        return LOADERS[name]
    domain = next((d for d in all_domains() if d.command == name), None)
    if domain is None:
        raise DatasetError(f"unknown dataset '{name}'{where}: use {', '.join(dataset_names())}")
    return functools.partial(load_domain_questions, domain.name)


def load_dataset(name: str, data: Path | None = None, split: str | None = None) -> Dataset:
    """A dataset by name: from `data`, else from its folder in the shared data (a domain: its own questions)."""
    loader = _loader(name)
    root = data or (shared_data_dir() / name if name in LOADERS else None)
    return loader(root, *([split] if split else []))


#: Where each benchmark loader's first argument lies relative to the file a run.json records as its source (a domain's
#: is the questions file itself).
SOURCE_ROOTS: dict[str, Callable[[Path], Path]] = {
    "spider": lambda source: source.parent,  # <root>/<split>.json
    "bird": lambda source: source.parent.parent,  # <root>/<split folder>/<file>.json
}


def reload_dataset(meta: dict) -> Dataset:
    """The dataset a results folder was made from, as its run.json records it (source relative to the repository)."""
    from askchain.eval.provenance import from_repo

    name = meta.get("dataset")
    loader = _loader(name, " in run.json")
    source = from_repo(meta.get("source", ""))
    return loader(SOURCE_ROOTS[name](source) if name in SOURCE_ROOTS else source, meta.get("split", "dev"))
