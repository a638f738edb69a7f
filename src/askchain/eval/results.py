"""A results folder as files: `results.jsonl` (one scored question a line), `run.json` (what was run, by which runs)
and the error classes a record's `error_class` takes.

The runner writes these and the report, the selection audit and `askchain bench` read them; they live apart from
both so that neither has to import the other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from askchain.errors import DatasetError

RESULTS_FILE = "results.jsonl"
META_FILE = "run.json"
#: The record field naming the run (an entry of run.json's "runs", askchain.eval.provenance) that answered it.
RUN_KEY = "eval_run"

# Why a prediction failed, from the executor's message: first matching rule wins, else "runtime".
ERROR_RULES: tuple[tuple[str, re.Pattern], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("timeout", r"time limit|timed? ?out|interrupted"),
        ("syntax", r"cannot parse|syntax error|parser error|incomplete input|unrecognized token"),
        ("no-such-table-or-column",
         r"no such (table|column)|(table|column)\b.*\b(does not exist|not found|cannot be read)"
         r"|referenced column"),
        ("refused", r"not allowed|only read-only|exactly one statement|empty sql"),
    )
)
#: The class of an error validation found, by the id of the rule that found it ("rule:kind" where the rule tells
#: kinds apart, askchain.rules.base.Finding.kind); any other rule's finding is "runtime".
RULE_CLASSES: dict[str, str] = {
    "syntax": "syntax", "syntax:empty": "runtime",
    "tables": "no-such-table-or-column", "columns": "no-such-table-or-column", "columns:ambiguous": "runtime",
    "record_fields": "no-such-table-or-column",
}
#: Classes meaning the predicted SQL did not run to completion.
EXECUTION_ERRORS = ("refused", "syntax", "no-such-table-or-column", "runtime", "timeout")


def classify_error(error: str | None, correct: bool, pred_rows: int, gold_rows: int,
                   findings: Sequence[Mapping[str, str]] = ()) -> str:
    """The error class of one prediction. A failed execution's is read from `findings` where validation's findings
    are its error (each {"rule", "kind", "message"}: by rule id, RULE_CLASSES), else from the engine's message
    (ERROR_RULES); of several classes, the first of ERROR_RULES' order."""
    if error:
        classes = {finding_class(f) for f in findings} if findings else {message_class(error)}
        return next((name for name, _ in ERROR_RULES if name in classes), "runtime")
    if correct:
        return "none"
    return "empty-result" if pred_rows == 0 and gold_rows > 0 else "wrong-result"


def message_class(message: str) -> str:
    """The class of an error message (an engine's, or a problem no rule found): the first matching rule's."""
    return next((name for name, rule in ERROR_RULES if rule.search(message)), "runtime")


def finding_class(finding: Mapping[str, str]) -> str:
    """The class of one finding of validation: by its rule's id and kind; a finding of no rule by its message."""
    rule, kind = finding.get("rule", ""), finding.get("kind", "")
    if not rule:
        return message_class(finding.get("message", ""))
    return RULE_CLASSES.get(f"{rule}:{kind}", RULE_CLASSES.get(rule, "runtime"))


def read_results(out_dir: Path) -> list[dict[str, Any]]:
    path = Path(out_dir) / RESULTS_FILE
    if not path.is_file():
        return []
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{n} is not valid JSON: {exc.msg}") from exc
    return records


def read_meta(out_dir: Path) -> dict[str, Any]:
    """The folder's run.json, or {} when it has none (folders written before run.json existed)."""
    path = Path(out_dir) / META_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path} is not valid JSON: {exc.msg}") from exc


def write_meta(out_dir: Path, meta: dict[str, Any]) -> None:
    (Path(out_dir) / META_FILE).write_text(json.dumps(meta, indent=2))
