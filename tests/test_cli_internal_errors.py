"""A bug inside a command reaches the user as one line and exit code 1, with the traceback only on request."""

import os
import subprocess
import sys

import pytest

# Runs `askchain sql` with the database lookup replaced by one that fails the way a bug does.
FAILING_CLI = """
import sys
import askchain.db.connect

def broken(*args, **kwargs):
    raise KeyError("no engine [registered] for 'x'")

askchain.db.connect.resolve_database = broken
sys.argv = ["askchain", "sql", "--db", "x.sqlite", "SELECT 1"]
from askchain.cli import main
main()
"""


def run_failing(debug: str | None):
    env = {k: v for k, v in os.environ.items() if k != "ASKCHAIN_DEBUG"}
    if debug is not None:
        env["ASKCHAIN_DEBUG"] = debug
    return subprocess.run([sys.executable, "-c", FAILING_CLI], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("debug", [None, "0"])
def test_an_unexpected_error_is_one_line_and_exit_1(debug):
    out = run_failing(debug)
    assert out.returncode == 1
    assert out.stderr.strip() == """error: internal error: KeyError: "no engine [registered] for 'x'\""""


def test_askchain_debug_keeps_the_traceback():
    out = run_failing("1")
    assert out.returncode == 1
    assert "Traceback" in out.stderr and "KeyError" in out.stderr
