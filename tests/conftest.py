"""Shared fixtures: a small generated database, the public datasets (tests needing them are marked `shared_data`), and
settings whose caches live in the test session's temp dir."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest

from askchain.config import shared_data_dir

# ---------------------------------------------------------------------------------------------------------------------
# The fixture database: Spider's concert_singer schema with rows of our own, so tests that only need a small related
# database need no shared data. Its quirks are kept on purpose: concert.Stadium_ID and singer_in_concert.Singer_ID are
# text referring to number keys, singer.Is_male is a bool stored as 'T'/'F', years are text.

CONCERT_SCHEMA = """
CREATE TABLE "stadium" ("Stadium_ID" int, "Location" text, "Name" text, "Capacity" int, "Highest" int, "Lowest" int,
    "Average" int, PRIMARY KEY ("Stadium_ID"));
CREATE TABLE "singer" ("Singer_ID" int, "Name" text, "Country" text, "Song_Name" text, "Song_release_year" text,
    "Age" int, "Is_male" bool, PRIMARY KEY ("Singer_ID"));
CREATE TABLE "concert" ("concert_ID" int, "concert_Name" text, "Theme" text, "Stadium_ID" text, "Year" text,
    PRIMARY KEY ("concert_ID"), FOREIGN KEY ("Stadium_ID") REFERENCES "stadium"("Stadium_ID"));
CREATE TABLE "singer_in_concert" ("concert_ID" int, "Singer_ID" text, PRIMARY KEY ("concert_ID", "Singer_ID"),
    FOREIGN KEY ("concert_ID") REFERENCES "concert"("concert_ID"),
    FOREIGN KEY ("Singer_ID") REFERENCES "singer"("Singer_ID"));
"""
CONCERT_ROWS = {
    "stadium": [
        (1, "Harbour Town", "Quayside Arena", 12000, 5100, 1300, 2200),
        (2, "Millbrook", "Millbrook Park", 9800, 2400, 1000, 1500),
        (3, "Eastfield", "Eastfield Bowl", 2500, 1900, 520, 870),
        (4, "Capital City", "Crown Stadium", 51000, 1800, 450, 740),
        (5, "Riverside", "Riverside Ground", 3900, 1100, 400, 650),
        (6, "Northgate", "Northgate Field", 4200, 950, 410, 640),
        (7, "Stonebridge", "Old Mill Park", 3100, 1050, 330, 630),
        (8, "Westhaven", "Westhaven Park", 4000, 840, 400, 610),
        (9, "Kingsford", "Kingsford Green", 3950, 790, 310, 560),
    ],
    "singer": [  # 6 singers: 4 from France, 1 from the Netherlands, 1 from the United States
        (1, "Lena Vos", "Netherlands", "Tide", "1994", 52, "F"),
        (2, "Marcus Bell", "United States", "Neon Nights", "2009", 32, "T"),
        (3, "Jules Marchand", "France", "Soleil", "2013", 29, "T"),
        (4, "Claire Dumas", "France", "Riviere", "2003", 41, "F"),
        (5, "Etienne Roux", "France", "Minuit", "2014", 43, "T"),
        (6, "Hugo Lefevre", "France", "Lumiere", "2016", 25, "T"),
    ],
    "concert": [
        (1, "Opening Night", "Free choice", "1", "2014"),
        (2, "Spring Session", "Free choice 2", "2", "2014"),
        (3, "Home Visits", "Old Favourites", "2", "2015"),
        (4, "Week 1", "Wide Open", "9", "2014"),
        (5, "Week 1", "Summer Songs", "8", "2015"),
        (6, "Week 2", "All Night Long", "7", "2015"),
    ],
    "singer_in_concert": [
        (1, "2"), (1, "3"), (1, "5"), (2, "3"), (2, "6"), (3, "5"), (4, "4"), (5, "6"), (5, "3"), (6, "2"),
    ],
}


@pytest.fixture(scope="session")
def concert_db(tmp_path_factory) -> Path:
    """The fixture database, generated once per session; named concert_singer, which is then its database id."""
    path = tmp_path_factory.mktemp("fixture-db") / "concert_singer.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(CONCERT_SCHEMA)
        for table, rows in CONCERT_ROWS.items():
            conn.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(rows[0]))})', rows)
        conn.commit()
    return path


@pytest.fixture
def concert_db_copy(concert_db, tmp_path) -> Path:
    """A private copy of the fixture database, so byte-identity checks cannot be disturbed by other tests."""
    target = tmp_path / "concert_singer.sqlite"
    shutil.copy(concert_db, target)
    return target


# ---------------------------------------------------------------------------------------------------------------------
# The public datasets (Spider, BIRD, ethereum-etl samples) in ../shared/data or $ASKCHAIN_SHARED_DATA. A test needing
# them is marked `shared_data`, or uses one of the fixtures below, which marks it. Without the data those tests are
# not run, and one line at the end of the session says how many they are; with it (as in CI) they run.

SHARED_DATA_FIXTURES = {"spider_root", "bird_root", "superhero_db", "etl_samples"}
_NOT_RUN = pytest.StashKey[int]()
_NO_ANVIL = pytest.StashKey[int]()


def anvil_binary() -> Path | None:
    """Foundry's anvil: $ASKCHAIN_ANVIL, else where scripts/setup_anvil.sh puts it, else on the PATH."""
    named = os.environ.get("ASKCHAIN_ANVIL")
    installed = Path(__file__).resolve().parents[1] / ".tools/anvil/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
    found = Path(named) if named else installed if installed.is_file() else shutil.which("anvil")
    return Path(found) if found and Path(found).is_file() else None


def _shared(*parts: str) -> Path:
    path = shared_data_dir().joinpath(*parts)
    if not path.exists():  # the folder is there but incomplete: an error to see, not a test to skip quietly
        pytest.fail(f"{path} is missing from the shared data", pytrace=False)
    return path


@pytest.fixture(scope="session")
def spider_root() -> Path:
    return _shared("spider")


@pytest.fixture(scope="session")
def bird_root() -> Path:
    return _shared("bird")


@pytest.fixture(scope="session")
def superhero_db() -> Path:
    """BIRD's superhero database: real values with typos and case to retrieve."""
    return _shared("bird", "dev_databases", "superhero", "superhero.sqlite")


@pytest.fixture(scope="session")
def etl_samples() -> Path:
    """Real mainnet exports from ethereum-etl's tests."""
    return _shared("ethereum_etl_samples")


@pytest.fixture(scope="session")
def anvil_path() -> Path:
    """The anvil binary; a test using it (directly or through another fixture) is marked `anvil`."""
    return anvil_binary()


@pytest.fixture(scope="session")
def start_anvil(anvil_path):
    """A function genesis -> (process, URL): anvil on a free loopback port, its first block at `genesis` (a UTC
    datetime); the caller stops it, the session's end stops any still running."""
    started: list[subprocess.Popen] = []

    def start(genesis) -> tuple[subprocess.Popen, str]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        started.append(subprocess.Popen([str(anvil_path), "--port", str(port), "--silent", "--timestamp",
                                         str(int(genesis.timestamp()))], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return started[-1], f"http://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("anvil did not start")

    yield start
    for node in started:
        node.kill()
        node.wait()


def pytest_itemcollected(item):
    fixtures = set(getattr(item, "fixturenames", ()))
    if SHARED_DATA_FIXTURES & fixtures:
        item.add_marker(pytest.mark.shared_data)  # before `-m` selection, which then sees it
    if "anvil_path" in fixtures:
        item.add_marker(pytest.mark.anvil)


@pytest.hookimpl(trylast=True)  # after `-m`/`-k` selection: count only tests that would have run
def pytest_collection_modifyitems(config, items):
    for marker, present, key in (("shared_data", shared_data_dir().is_dir(), _NOT_RUN),
                                 ("anvil", anvil_binary() is not None, _NO_ANVIL)):
        needing = [] if present else [item for item in items if item.get_closest_marker(marker)]
        if needing:
            config.hook.pytest_deselected(items=needing)
            items[:] = [item for item in items if not item.get_closest_marker(marker)]
        config.stash[key] = len(needing)


def pytest_terminal_summary(terminalreporter, config):
    not_run = config.stash.get(_NOT_RUN, 0)
    if not_run:
        terminalreporter.write_line(
            f"shared data: {not_run} tests need {shared_data_dir()}, which is absent, and were not run "
            "(set ASKCHAIN_SHARED_DATA to the folder; CI runs them)"
        )
    no_anvil = config.stash.get(_NO_ANVIL, 0)
    if no_anvil:
        terminalreporter.write_line(f"anvil: {no_anvil} tests need Foundry's anvil, which is absent, and were not run "
                                    "(bash scripts/setup_anvil.sh, or set ASKCHAIN_ANVIL)")


# ---------------------------------------------------------------------------------------------------------------------
# Settings: the response cache, indexes, traces and datasets go to the session's temp dir, never the user's; only the
# embedded model files (paths.models_dir, ~1 GB, slow to assemble) stay where they are.


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    from askchain.config import get_settings

    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("ASKCHAIN_PATHS__CACHE_DIR", str(base / "askchain-cache"))
    # ASKCHAIN_TEST_DATA_DIR keeps built datasets and example stores across sessions, when a developer wants that
    monkeypatch.setenv("ASKCHAIN_PATHS__DATA_DIR", os.environ.get("ASKCHAIN_TEST_DATA_DIR", str(base / "askchain-data")))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
