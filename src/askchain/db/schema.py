"""A database's structure as plain data, and its two renderings for prompts (full DDL and a light schema)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from askchain.db.dialects import quoted
from askchain.prompt_data import SHORTENED, sql_string


@dataclass
class Column:
    name: str
    type: str
    description: str | None = None
    examples: list[Any] = field(default_factory=list)
    primary_key: bool = False


@dataclass
class ForeignKey:
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


@dataclass
class Table:
    name: str
    columns: list[Column]
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    row_count: int | None = None
    description: str | None = None
    #: How queries name this table when it differs from `name` (e.g. a fully qualified BigQuery name).
    query_name: str | None = None

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.columns if c.primary_key]

    @property
    def display_name(self) -> str:
        return self.query_name or self.name


@dataclass
class Schema:
    tables: list[Table]
    dialect: str
    name: str = ""
    #: Free-text knowledge about the data a prompt should carry (units, conventions); set by a domain.
    notes: str = ""

    @property
    def db_id(self) -> str:
        """The database's name in example pools (Spider's db_id): its file stem, or a BigQuery dataset without project."""
        return self.name.rsplit(".", 1)[-1]

    def table(self, name: str) -> Table | None:
        lowered = name.lower().strip("`\"[]")
        for table in self.tables:
            if lowered in (table.name.lower(), (table.query_name or "").lower()):
                return table
        short = lowered.rsplit(".", 1)[-1]
        return next((t for t in self.tables if t.name.lower() == short), None)

    def foreign_key_edges(self) -> list[tuple[str, str, str, str]]:
        """Every (table, column, ref_table, ref_column) pair of the foreign-key graph."""
        edges = []
        for table in self.tables:
            for fk in table.foreign_keys:
                edges += [(table.name, c, fk.ref_table, r) for c, r in zip(fk.columns, fk.ref_columns)]
        return edges

    def subset(self, columns_by_table: dict[str, list[str]]) -> "Schema":
        """The schema restricted to some tables (local or query names) and columns; an empty list keeps every column.

        Primary keys and the foreign keys between kept tables stay, so joins remain possible; foreign keys to dropped
        tables go, since nothing can join through them.
        """
        wanted: dict[str, set[str]] = {}
        for name, columns in columns_by_table.items():
            table = self.table(name)
            if table is not None:
                wanted.setdefault(table.name, set()).update(c.lower() for c in columns)
        tables = []
        for table in self.tables:
            if table.name not in wanted:
                continue
            fks = [fk for fk in table.foreign_keys if fk.ref_table in wanted]
            keep = wanted[table.name] | {c.lower() for c in table.primary_key} | {c.lower() for fk in fks for c in fk.columns}
            cols = [c for c in table.columns if not wanted[table.name] or c.name.lower() in keep]
            tables.append(Table(table.name, cols, fks, table.row_count, table.description, table.query_name))
        return Schema(tables, self.dialect, self.name, self.notes)

    def ddl(self, example_rows: dict[str, list[tuple]] | None = None) -> str:
        """CREATE TABLE statements with descriptions and example values as comments."""
        blocks = []
        formats_shown: set[str] = set()
        for table in self.tables:
            lines = []
            for col in table.columns:
                note = []
                if col.description:
                    note.append(_short(col.description))
                example = _example_note(col.examples, formats_shown)
                if example:
                    note.append("e.g. " + example)
                comment = f"  -- {'; '.join(note)}" if note else ""
                lines.append(f"  {self._name(col.name)} {col.type or 'TEXT'},{comment}")
            if table.primary_key:
                lines.append(f"  PRIMARY KEY ({', '.join(self._name(c) for c in table.primary_key)}),")
            for fk in table.foreign_keys:
                lines.append(
                    f"  FOREIGN KEY ({', '.join(self._name(c) for c in fk.columns)}) REFERENCES "
                    f"{self._name(fk.ref_table)}({', '.join(self._name(c) for c in fk.ref_columns)}),"
                )
            if lines:
                lines[-1] = _drop_trailing_comma(lines[-1])
            header = f"-- {_first_sentence(table.description, 200)}\n" if table.description else ""
            if table.row_count is not None:
                header += f"-- {table.row_count} rows\n"
            block = f"{header}CREATE TABLE {self._table_name(table)} (\n" + "\n".join(lines) + "\n);"
            rows = (example_rows or {}).get(table.name)
            if rows:
                names = ", ".join(c.name for c in table.columns)
                shown = "\n".join("--   " + ", ".join(_literal(v) for v in row) for row in rows)
                block += f"\n-- example rows ({names}):\n{shown}"
            blocks.append(block)
        return "\n\n".join(blocks)

    def _name(self, name: str) -> str:
        """A name quoted the dialect's way when it is not a plain word (sqlglot's test), else left bare, so prompts stay
        plain: a keyword used as a name (`hash` in BigQuery) reads as the domains' own queries write it."""
        identifier = exp.to_identifier(name)
        return identifier.sql(dialect=self.dialect) if identifier.quoted else name

    def _table_name(self, table: Table) -> str:
        """A qualified name (BigQuery's `project.dataset.table`) is quoted whole, the way BigQuery documents it."""
        return quoted(table.display_name, self.dialect) if table.query_name else self._name(table.name)

    def light(self) -> str:
        """One line per table: name(col type, ...) with key markers; the compact form for linking prompts."""
        lines = []
        for table in self.tables:
            cols = []
            for col in table.columns:
                mark = " PK" if col.primary_key else ""
                cols.append(f"{col.name} {col.type or 'TEXT'}{mark}".strip())
            line = f"{table.display_name}({', '.join(cols)})"
            refs = [
                f"{table.name}.{c} -> {fk.ref_table}.{r}" for fk in table.foreign_keys for c, r in zip(fk.columns, fk.ref_columns)
            ]
            if refs:
                line += "  FK: " + "; ".join(refs)
            lines.append(line)
        return "\n".join(lines)


def _drop_trailing_comma(line: str) -> str:
    head, sep, comment = line.partition("  -- ")
    return head.rstrip(",") + (sep + comment if sep else "")


#: A long string with no spaces (a hash, an address) shows this many leading characters: its format, not a value to
#: copy. Text keeps more, since its words can tell what the column holds.
FORMAT_PREFIX = 8
TEXT_PREFIX = 18
#: An example row's values are cut at this many characters (column examples are shorter still, above).
_LITERAL_CHARS = 60


def _example_note(values: list[Any], formats_shown: set[str]) -> str:
    """A column's example values for a prompt. An example that shows only a format or a magnitude (a shortened hash, a
    timestamp, a large number) is shown for the first column it fits and left out where it would repeat, so
    `block_hash` in five tables does not spend its tokens five times (digits are one token each)."""
    if not values:
        return ""
    text, format_only = _examples(values)
    if not format_only:
        return text
    if text in formats_shown:
        return ""
    formats_shown.add(text)
    return text


def _examples(values: list[Any]) -> tuple[str, bool]:
    """Example values for a prompt, spending few tokens where they say little: long strings (hashes, addresses),
    timestamps and large numbers show one value for their format or magnitude; small codes and names all show. Also
    says whether the text is such a format-only example."""
    values = [_plain(v) for v in values]
    if any(isinstance(v, str) and len(v) > 40 for v in values):
        first = str(values[0])
        return _literal(first[: TEXT_PREFIX if " " in first else FORMAT_PREFIX] + SHORTENED), True
    first = values[0]
    if any(_large(v) for v in values) or _looks_like_time(first):
        return _literal(first), _large(first) or _looks_like_time(first)
    return ", ".join(_literal(v) for v in values), False


def _large(value: Any) -> bool:
    return isinstance(value, (int, float)) and abs(value) >= 10_000


def _plain(value: Any) -> Any:
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _looks_like_time(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= 10 and value[4:5] == "-" and value[7:8] == "-"


def _first_sentence(text: str, limit: int = 200) -> str:
    """A table's description is cut to its first sentence: the rest rarely changes the SQL and costs tokens."""
    first = text.strip().split("\n")[0]
    cut = first.find(". ")
    return _short(first[: cut + 1] if cut > 0 else first, limit)


def _short(text: str, limit: int = 140) -> str:
    first = " ".join(text.split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _literal(value: Any) -> str:
    """An example value as SQL, on one line: a stored line break must not end the comment it stands in and put the
    rest of the value on a line of its own, where it would read as the prompt's own text."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return sql_string(value, _LITERAL_CHARS)
