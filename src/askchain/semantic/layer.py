"""A semantic layer is a list of entries, each a named piece of domain knowledge with the words that call for it:

- a metric: an expression with its unit and table ("ETH moved" = SUM(value) / 1e18 over transactions),
- an entity: a well-known thing by name or symbol (USDC = token 0xa0b8…, 6 decimals),
- a convention: how a phrase is read ("last 7 days" = the 7 full UTC days before today), with its exact SQL.

A question gets only the entries whose words it uses (a 1.5B model copies a definition shown beside the question
far better than it applies a rule buried in long notes), and the answer says which conventions it applied.
Patterns may capture a number (`last (?P<n>\\d+) days`): `{n}` in the entry's text is filled from the question.
An entry may carry checks: rules the SQL written for such a question must keep (a question in gwei must not divide by
1e18), each with the message that tells the reviser what to fix. A check is a structured predicate on the query's
parsed tree (`requires_tree: {limit: "{n}"}`, askchain.semantic.predicates) or, where none fits, a regular expression
over its text; both are filled from the question's values and validated so filled when the layer is loaded.
A time convention may carry its exact condition, which askchain writes in place of a window its checks flag.

Units name the columns stored in a base unit a user never reads (wei) and how to show them (ETH = wei / 1e18):
validation sends back a query whose result shows such a column raw, or compares one with a figure below the least
amount anyone means in that unit (`eth_balance > 1000` for 1,000 ETH), unless the question asks for that unit.

Column aliases name what a model writes for a table's column by another table's convention (`blocks.block_timestamp`
for `blocks.timestamp`); askchain renames them in each sample (askchain.pipeline.aliases). Word columns hold 32-byte
words (`logs.topics`): an address compared with one of their elements is padded to the word (askchain.pipeline.words).
With `show_ranking_measure`, a ranked answer shows what it is ranked by (askchain.pipeline.ranking).
Shorthands are conditions the model may write as one call (`LAST_DAYS(block_timestamp, 7)`), expanded to their exact
SQL in each sample and shown in that short form in prompts (askchain.pipeline.shorthands).
Grounded literals are constants (addresses, event hashes) a query may hold only where the question calls for them: a
model copies an example's constant into questions that never named it (askchain.pipeline.grounding).
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from sqlglot import exp
from sqlglot.errors import SqlglotError

from askchain.db.dialects import parse_one
from askchain.errors import ConfigError
from askchain.numbers import COUNT, as_digits
from askchain.semantic.predicates import SAMPLE, PredicateError, build, query_or_none, validate

Kind = Literal["metric", "entity", "convention"]
#: The query's parsed tree, made on first use; None where it cannot be parsed.
Tree = Callable[[], "exp.Expression | None"]


class Spec(dict):
    """A mapping as written (a tree predicate, a window), hashed by its JSON: an entry holding one hashes like any
    other."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(json.dumps(self, sort_keys=True, default=str))


Predicate = Annotated[dict[str, Any], AfterValidator(Spec)]
Window = Predicate  # a governed window as written: {name, n}, hashed alike
GovernedFilter = Predicate  # a governed filter as written: {field, op, value}, hashed alike


class Check(BaseModel):
    """A rule on the SQL for a question that calls for the entry: regular expressions over its text
    (case-insensitive) or predicates on its parsed tree (askchain.semantic.predicates); where both forms are given,
    both must hold. A check on the tree says nothing of a query that cannot be parsed (its syntax is reported)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The check applies only to SQL matching this (e.g. SQL reading token_transfers); none: always.
    applies: str | None = None
    requires: str | None = None
    forbids: str | None = None
    applies_tree: Predicate | None = None
    requires_tree: Predicate | None = None
    forbids_tree: Predicate | None = None
    message: str

    @property
    def patterns(self) -> list[str]:
        """The regular expressions, as written (placeholders unfilled)."""
        return [p for p in (self.applies, self.requires, self.forbids) if p]

    @property
    def predicates(self) -> list[dict[str, Any]]:
        """The tree predicates, as written (placeholders unfilled)."""
        return [p for p in (self.applies_tree, self.requires_tree, self.forbids_tree) if p]

    def broken_by(self, sql: str, values: dict[str, str], tree: Tree) -> str | None:
        """The message when `sql` (whose tree `tree` gives) breaks the rule, else None."""
        def found(pattern: str | None) -> bool:
            return re.search(pattern.format(**values), sql, re.IGNORECASE) is not None

        def holds(spec: dict[str, Any] | None) -> bool:
            return build(spec, values)(parsed)

        parsed = tree() if self.predicates else None
        if self.predicates and parsed is None:
            return None
        if (self.applies and not found(self.applies)) or (self.applies_tree and not holds(self.applies_tree)):
            return None
        broken = (self.requires and not found(self.requires)) or (self.forbids and found(self.forbids)) or \
            (self.requires_tree and not holds(self.requires_tree)) or (self.forbids_tree and holds(self.forbids_tree))
        return self.message.format(**values) if broken else None


def check_errors(check: Check) -> list[str]:
    """What is wrong with a check's patterns and predicates once filled as a question fills them (an unescaped
    `{40}` quantifier compiles as written and breaks once filled): each names the pattern or predicate."""
    errors = []
    for pattern in check.patterns:
        try:
            names = [name for _, name, _, _ in string.Formatter().parse(pattern) if name]
            re.compile(pattern.format(**{name: SAMPLE for name in names}), re.IGNORECASE)
        except (re.error, ValueError, KeyError, IndexError) as exc:
            errors.append(f"a check pattern {pattern!r} that does not compile once filled: {exc}")
    for spec in check.predicates:
        try:
            validate(spec)
        except PredicateError as exc:
            errors.append(f"a bad tree predicate {spec!r}: {exc}")
    return errors


def parsed_tree(sql: str, dialect: str | None) -> exp.Expression | None:
    """`sql` parsed in `dialect` for the checks on the tree; None where it cannot be."""
    try:
        return query_or_none(parse_one(sql, dialect))
    except SqlglotError:
        return None


class Entry(BaseModel):
    """One definition; `terms` are plain phrases matched as whole words, `patterns` regular expressions (`{count}`
    in one: a count in digits or in words)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    terms: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    #: What the prompt shows: the definition with its SQL, as the model should write it; empty for an entry that
    #: only checks (a convention the model keeps without being told, broken by habit the check catches).
    definition: str = ""
    #: How the answer states the reading it applied (conventions); empty: not worth telling the user.
    reading: str = ""
    checks: tuple[Check, ...] = ()
    #: Entries that, called for by the same question, make this one the wrong reading ("share, in percent" is a
    #: percentage; "NFT sales volume" is not a token amount).
    yields_to: tuple[str, ...] = ()
    #: A time convention's exact condition on `{column}` (and the pattern's values): askchain writes it in place of a
    #: window written otherwise that the entry's checks flag (askchain.pipeline.windows).
    condition: str = ""
    #: The reading answers the question in one query (two periods compared side by side in one row), so the planner's
    #: rule (`planner: rules`) does not split it into steps whose rows the answer would have to put together.
    single_query: bool = False
    #: A time convention's window in the domain's governed semantic model (`{name, n}`; `n` may be "{n}", the
    #: pattern's count): a semantic query on a question naming this one period takes it (askchain.generation.semantic).
    window: Window | None = None
    #: The question sets periods against each other ("the week before", "day over day"): no one window is its own.
    compares_periods: bool = False
    #: A filter on a dimension of the domain's governed semantic model (`{field, op, value}`, "successful" is status
    #: 1): a semantic query on a model with that dimension, none of whose measures or filters reads it already, takes
    #: it (askchain.generation.semantic_fit.with_the_filters_named).
    filter: GovernedFilter | None = None


class Unit(BaseModel):
    """Columns stored in a base unit, with how a result should show them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    #: "table.column" for each column in this unit.
    columns: tuple[str, ...]
    #: The fix a finding names; {column} is the column's name.
    shown_as: str
    #: A question matching this (case-insensitive) asks for the base unit itself, so raw amounts are right.
    asked_for: str
    #: The smallest amount anyone means in this unit: a column compared with less (`eth_balance > 1000`) was compared
    #: with a figure in a larger unit (1,000 ETH); none: every figure may be meant.
    least_meant: float | None = None
    #: The units a question writes amounts in ("10 ETH", "50 gwei"), each word (case-insensitive) with how many of this
    #: unit one is: a column compared with a figure is compared with one of the question's amounts in one of them.
    scales: dict[str, float] = {}

    def conversion(self, column: str) -> str:
        """How to show `column` in a readable unit, for a finding."""
        return self.shown_as.format(column=column)

    def asked_in(self, question: str) -> bool:
        """Whether the question asks for amounts in this unit itself (then raw amounts are what it wants)."""
        return bool(re.search(self.asked_for, question, re.IGNORECASE))

    def how_shown(self, column: str) -> str:
        """The unit and how to show `column` in a readable one, for a finding."""
        return f"{self.name}: {self.conversion(column)}"


class Shorthand(BaseModel):
    """A condition written as one call: `call` and `sql` share their parameters, `{column}` (a column, maybe
    qualified) and `{n}` (a whole number)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: str
    sql: str
    #: What the prompt says the call means.
    note: str

    @property
    def name(self) -> str:
        return self.call.split("(", 1)[0].strip().upper()

    @property
    def parameters(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.call))


#: A shorthand's parameters and what each stands for in written SQL.
SHORTHAND_PARAMETERS = {"column": r"`?[A-Za-z_][\w.]*`?", "n": r"\d+"}
#: A parameter's place in a shorthand's call or SQL: `{column}`.
PLACEHOLDER = re.compile(r"{(\w+)}")


class KnownLiteral(BaseModel):
    """A constant the domain's prompts show (the Transfer event's hash), called for by the words that ask about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    literal: str
    #: What it is, as a finding names it.
    name: str
    terms: tuple[str, ...]

    def called_for(self, question: str) -> bool:
        return any(_term_pattern(term).search(question) for term in self.terms)


class GroundedLiterals(BaseModel):
    """Constants matching `pattern` (case-insensitive, anywhere in a string literal) are grounded when the question
    writes them, an entity it names defines them, or it uses a term of theirs among the `known`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    known: tuple[KnownLiteral, ...] = ()

    def known_as(self, literal: str) -> KnownLiteral | None:
        """The known constant `literal` is (any case); None for one the layer does not know."""
        return next((known for known in self.known if known.literal.lower() == literal.lower()), None)


@dataclass(frozen=True)
class Reading:
    """An entry a question called for, with the values its pattern captured."""

    entry: Entry
    values: dict[str, str] = field(default_factory=dict)

    @property
    def definition(self) -> str:
        return self.entry.definition.format(**self.values) if self.values else self.entry.definition

    @property
    def reading(self) -> str:
        return self.entry.reading.format(**self.values) if self.values else self.entry.reading

    @property
    def window(self) -> dict[str, Any] | None:
        """The governed window the entry names, its count filled in from the question ("the past 14 days": 14)."""
        if not self.entry.window or (self.entry.window.get("n") == "{n}" and "n" not in self.values):
            return None  # a count the question's words did not give (an entry matched by a term)
        return {key: int(value.format(**self.values)) if isinstance(value, str) and key == "n" else value
                for key, value in self.entry.window.items()}

    def findings(self, sql: str, dialect: str | None = None, tree: Tree | None = None) -> list[str]:
        """What `sql` gets wrong about this entry, each saying the fix. The checks on the tree read `tree` (by
        default, `sql` parsed in `dialect` on first use)."""
        tree = tree or cache(lambda: parsed_tree(sql, dialect))
        return [m for check in self.entry.checks if (m := check.broken_by(sql, self.values, tree))]


@dataclass
class Layer:
    entries: list[Entry]
    units: list[Unit] = field(default_factory=list)
    #: table (lower case) -> {alias (lower case): the table's own column}
    column_aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    #: "table.column" of each array column whose elements are 32-byte words
    word_columns: tuple[str, ...] = ()
    show_ranking_measure: bool = False
    shorthands: tuple[Shorthand, ...] = ()
    grounded_literals: GroundedLiterals | None = None
    #: "table.column" of a column that names without identifying (lower case) -> the "table.column"s identifying it
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._terms = [(entry, [_term_pattern(t) for t in entry.terms]
                        + [re.compile(_expanded(p), re.IGNORECASE) for p in entry.patterns])
                       for entry in self.entries]

    def match(self, question: str, limit: int = 8) -> list[Reading]:
        """The entries `question` calls for, in the order they appear in it; the longest match wins a span (the
        first entry on a tie), so "ETH burned" is not also read as "ETH", and an entry yields to those it names. An
        entry is read where its first pattern that matches first matches. A convention whose match lies inside
        another entry's span is read at its next match ("what share of ETH ...? Fraction between 0 and 1" asks for a
        share of ETH and for a fraction); a metric's later mention is the same thing again ("blob fees ... highest
        fees first" is no transaction fee)."""
        first: list[tuple[int, int, Reading]] = []
        later: list[tuple[int, int, Reading]] = []
        for entry, patterns in self._terms:
            hits = [hit for pattern in patterns for hit in pattern.finditer(question)]
            for i, hit in enumerate(hits if entry.kind == "convention" else hits[:1]):
                values = {k: as_digits(v) for k, v in hit.groupdict().items() if v is not None}
                (later if i else first).append((hit.start(), hit.end(), Reading(entry, values)))
        chosen: list[tuple[int, int, Reading]] = []
        for found in (first, later):
            for start, end, reading in sorted(found, key=lambda f: (-(f[1] - f[0]), f[0])):
                inside = any(s <= start and end <= e for s, e, _ in chosen)
                if not inside and all(r.entry.name != reading.entry.name for _, _, r in chosen):
                    chosen.append((start, end, reading))
        names = {reading.entry.name for _, _, reading in chosen}
        return [reading for _, _, reading in sorted(chosen, key=lambda c: c[0])
                if not names.intersection(reading.entry.yields_to)][:limit]

    @property
    def units_by_column(self) -> dict[str, Unit]:
        """The unit of each base-unit column ("table.column", lower case)."""
        return {column.lower(): unit for unit in self.units for column in unit.columns}


def named_window(readings: list[Reading]) -> dict[str, Any] | None:
    """The one governed window a question's readings name, or None where they name none, several, or set periods
    against each other."""
    if any(reading.entry.compares_periods for reading in readings):
        return None
    return _one_window(readings)


def compared_window(readings: list[Reading]) -> dict[str, Any] | None:
    """The one governed window a question setting periods against each other names ("the last 7 days compared with
    the 7 days before": the last 7 days), which a query may compare with the period before it; None where its readings
    set no periods against each other, or name no window or several."""
    if not any(reading.entry.compares_periods for reading in readings):
        return None
    return _one_window(readings)


def _one_window(readings: list[Reading]) -> dict[str, Any] | None:
    windows = {json.dumps(window, sort_keys=True) for reading in readings if (window := reading.window)}
    return json.loads(windows.pop()) if len(windows) == 1 else None


def named_filters(readings: list[Reading]) -> tuple[dict[str, Any], ...]:
    """The governed filters a question's readings name, save those on a field it names two values of ("failed and
    successful traces" sets them against each other)."""
    named = list({json.dumps(reading.entry.filter, sort_keys=True): dict(reading.entry.filter)
                  for reading in readings if reading.entry.filter}.values())
    fields = [f["field"] for f in named]
    return tuple(f for f in named if fields.count(f["field"]) == 1)


def _expanded(pattern: str) -> str:
    """An entry's pattern with its `{count}` (askchain.numbers.COUNT, read as digits) written out."""
    return pattern.replace("{count}", COUNT)


def _term_pattern(term: str) -> re.Pattern:
    """A term's words joined by spaces or hyphens ("contract creation" in "contract-creation transactions"), never
    inside a longer word or hyphenated compound ("failed" is not in "non-failed")."""
    words = r"[\s-]+".join(re.escape(w) for w in term.split())
    return re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE)


def load_layer(path: Path) -> Layer:
    """A layer from a YAML file holding a list of entries under `entries:`, of units under `units:`, a mapping of
    column aliases by table under `column_aliases:`, a list of `word_columns:`, the keys of each label under
    `labels:`, the `show_ranking_measure:` flag, a list of `shorthands:` and the `grounded_literals:` rule."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
        entries = [Entry(**item) for item in data.get("entries", [])]
        units = [Unit(**item) for item in data.get("units", [])]
        aliases = {str(table).lower(): {str(alias).lower(): str(own) for alias, own in names.items()}
                   for table, names in (data.get("column_aliases") or {}).items()}
        words = data.get("word_columns") or []
        if not isinstance(words, list) or not all(isinstance(w, str) and "." in w for w in words):
            raise TypeError(f"word_columns must be a list of table.column, not {words!r}")
        labels = {str(label).lower(): tuple(str(key).lower() for key in keys)
                  for label, keys in (data.get("labels") or {}).items()}
        if not all("." in label and keys and all("." in key for key in keys) for label, keys in labels.items()):
            raise TypeError(f"labels must map table.column to a list of table.column, not {data.get('labels')!r}")
        ranking = data.get("show_ranking_measure", False)
        if not isinstance(ranking, bool):
            raise TypeError(f"show_ranking_measure must be true or false, not {ranking!r}")
        shorthands = tuple(Shorthand(**item) for item in data.get("shorthands", []))
        grounded = GroundedLiterals(**data["grounded_literals"]) if data.get("grounded_literals") else None
    except (OSError, yaml.YAMLError, TypeError, AttributeError, ValidationError) as exc:
        raise ConfigError(f"semantic layer {path} is invalid: {str(exc).splitlines()[0]}") from exc
    patterns = [(f"entry {entry.name}", _expanded(pattern)) for entry in entries for pattern in entry.patterns]
    patterns += [(f"unit {unit.name}", unit.asked_for) for unit in units]
    patterns += [("grounded_literals", grounded.pattern)] if grounded else []
    for owner, pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"semantic layer {path}: {owner} has a bad pattern {pattern!r}: {exc}") from exc
    for entry in entries:
        if errors := [error for check in entry.checks for error in check_errors(check)]:
            raise ConfigError(f"semantic layer {path}: entry {entry.name} has {errors[0]}")
    for shorthand in shorthands:
        used = set(PLACEHOLDER.findall(shorthand.sql))
        if not re.fullmatch(r"[A-Za-z_]\w*\(.*\)", shorthand.call.strip()) or used != shorthand.parameters or \
                used - SHORTHAND_PARAMETERS.keys():
            raise ConfigError(f"semantic layer {path}: shorthand {shorthand.call!r} must be NAME(...) whose sql uses "
                              f"the same parameters, of {sorted(SHORTHAND_PARAMETERS)}")
    if len({shorthand.name for shorthand in shorthands}) < len(shorthands):
        raise ConfigError(f"semantic layer {path}: two shorthands share a name")
    for entry in entries:
        if entry.condition and ("{column}" not in entry.condition or not entry.checks):
            raise ConfigError(f"semantic layer {path}: entry {entry.name}'s condition must be on {{column}} and the "
                              "entry must have the checks that call for it")
    layer = Layer(entries, units, aliases, tuple(words), ranking, shorthands, grounded, labels)
    names = {entry.name for entry in layer.entries}
    for entry in layer.entries:
        if unknown := set(entry.yields_to) - names:
            raise ConfigError(f"semantic layer {path}: entry {entry.name} yields to unknown entries {sorted(unknown)}")
    return layer
