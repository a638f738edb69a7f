"""A toy domain outside askchain: two tables of bike rides, a dataset builder, a few examples and questions.

It is installed by the tests as any plugin would be (a distribution with an `askchain.domains` entry point), to show
that a new domain needs no edit of askchain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import typer
from sqlglot import exp

from askchain.db.duckdb import DuckDBEngine
from askchain.domain import Domain
from askchain.rules.analysis import Analysis
from askchain.rules.base import Check

HERE = Path(__file__).parent
STATIONS = [(1, "Harbour", "Lisbon"), (2, "Castle", "Lisbon"), (3, "Market", "Porto")]
RIDES = [(1, 1, 12), (2, 1, 30), (3, 2, 7), (4, 3, 45), (5, 3, 5), (6, 3, 20)]


def build(path: Path) -> None:
    """Write the toy dataset: stations and the rides that started at them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE stations (id INTEGER PRIMARY KEY, name VARCHAR, city VARCHAR)")
        con.execute(
            "CREATE TABLE rides (id INTEGER PRIMARY KEY, station_id INTEGER REFERENCES stations (id), minutes INTEGER)"
        )
        con.executemany("INSERT INTO stations VALUES (?, ?, ?)", STATIONS)
        con.executemany("INSERT INTO rides VALUES (?, ?, ?)", RIDES)


class RideHours(Check):
    """Ride lengths are whole minutes: a query dividing them by 60 answers in hours, which no toy question asks for."""

    id = "toy_ride_hours"
    order = 250

    def check(self, analysis: Analysis):
        for division in analysis.written.find_all(exp.Div):
            if division.this.find(exp.Column) is not None and division.expression.sql() == "60" and \
                    "minutes" in division.this.sql().lower():
                yield self.error(f"{division.sql()} is hours; toy rides are told in minutes")
                return


@dataclass
class ToyEngine(DuckDBEngine):
    def _introspect(self):
        schema = super()._introspect()
        schema.name = ToyDomain.name
        return schema


class ToyDomain(Domain):
    name = "toy"
    command = "toy"
    example_files = (HERE / "examples.jsonl",)
    eval_file = HERE / "questions.jsonl"
    schema_file = HERE / "schema.json"
    tables = frozenset({"stations", "rides"})

    def notes(self) -> str:
        return "Ride lengths are whole minutes; a ride belongs to the station it started at."

    def engine(self, location, limits, **options):
        return ToyEngine(location, limits, notes=self.notes(), **options)

    def default_database(self, settings):
        path = settings.paths.data("toy", "rides.duckdb")
        if not path.is_file():
            build(path)
        return self.engine(str(path), settings.db)

    def rules(self):
        return (RideHours(),)

    def cli(self):
        return app


app = typer.Typer(no_args_is_help=True, help="The toy bike-ride dataset.")


@app.command("build")
def build_command(out: Path = typer.Option(..., "--out", help="DuckDB file to write.")):
    """Write the toy dataset."""
    build(out)
    typer.echo(f"{out}: stations {len(STATIONS)}, rides {len(RIDES)}")


@app.command("stations")
def stations_command():
    """List the station names."""
    typer.echo(", ".join(name for _, name, _ in STATIONS))
