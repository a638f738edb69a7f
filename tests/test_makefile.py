"""`make run` installs only what answering needs; the test services (Chromium, PostgreSQL, the BigQuery emulator,
anvil) and the test-only packages come with `make test`. Read from make's own dry run, so a step is seen wherever it hides."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_SERVICE_SCRIPTS = ("setup_test_services.sh", "setup_postgres.sh", "setup_bqemulator.sh", "setup_chromium.sh",
                        "setup_anvil.sh")
EDITABLE_INSTALL = re.compile(r'pip install -q -e "\.\[([^\]]*)\]"')

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def dry_run(target: str, directory: Path = ROOT, *, every_step: bool = True) -> str:
    """The commands `make TARGET` would run; with every_step, as on a fresh clone (-B: every stamp out of date).
    A parent make's flags and variables are left out, so `make test` running this test reads the same."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    flags = ["-n", "-B"] if every_step else ["-n"]
    done = subprocess.run(["make", *flags, target], cwd=directory, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def installed_extras(commands: str) -> set[str]:
    """The extras named by the dry run's `pip install -e ".[...]"` lines."""
    return {extra for group in EDITABLE_INSTALL.findall(commands) for extra in group.split(",") if extra}


def optional_dependencies() -> dict[str, list[str]]:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def with_nested_extras(extras: set[str]) -> set[str]:
    """The extras together with those they pull in themselves (`test` brings `askchain[openai,anthropic,gemini]`)."""
    optional = optional_dependencies()
    found, todo = set(), list(extras)
    while todo:
        extra = todo.pop()
        if extra in found:
            continue
        found.add(extra)
        for requirement in optional.get(extra, []):
            nested = re.fullmatch(r"askchain\[([^\]]*)\]", requirement)
            todo.extend(nested.group(1).split(",") if nested else [])
    return found


def test_make_run_installs_no_browser_database_server_or_emulator():
    commands = dry_run("run")
    for script in TEST_SERVICE_SCRIPTS:
        assert script not in commands
    assert "apt-get" not in commands
    assert installed_extras(commands) == {"model-1_5b", "pipeline"}
    assert "askchain prepare" in commands and "askchain ask" in commands


def test_make_test_installs_every_extra_and_the_test_services():
    commands = dry_run("test")
    assert with_nested_extras(installed_extras(commands)) == set(optional_dependencies())
    assert "scripts/setup_test_services.sh" in commands
    services = (ROOT / "scripts" / "setup_test_services.sh").read_text()
    for script in TEST_SERVICE_SCRIPTS[1:]:
        assert script in services
    assert commands.rstrip().endswith("pytest -q")


def test_compare_and_the_llama_benchmark_install_no_test_services():
    for target in ("compare", "llama-batched-bench"):
        commands = dry_run(target)
        assert "setup_test_services.sh" not in commands
        assert "askchain prepare" in commands


def test_a_second_make_runs_only_the_command(tmp_path):
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    sources = [tmp_path / "Makefile", tmp_path / "pyproject.toml", *(tmp_path / "scripts").iterdir()]
    for source in sources:
        os.utime(source, (1_000_000_000, 1_000_000_000))
    (tmp_path / ".venv").mkdir()
    for age, stamp in enumerate((".installed", ".installed-all", ".test-services")):
        (tmp_path / ".venv" / stamp).touch()
        os.utime(tmp_path / ".venv" / stamp, (1_000_000_100 + age, 1_000_000_100 + age))
    assert dry_run("test", tmp_path, every_step=False).strip() == ".venv/bin/pytest -q"
    assert dry_run("run", tmp_path, every_step=False).strip().startswith(".venv/bin/askchain ask ")
