"""The small database the pipeline's method and runner tests ask over."""

from __future__ import annotations

import sqlite3

import pytest


@pytest.fixture
def db(tmp_path) -> str:
    """Three singers in a SQLite file: enough for a count to be right or wrong."""
    path = tmp_path / "singers.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT)")
        conn.executemany("INSERT INTO singer VALUES (?, ?, ?)",
                         [(1, "Ana", "France"), (2, "Bo", "France"), (3, "Cy", "Chile")])
    return str(path)
