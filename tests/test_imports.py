"""The import graph's rules: the core never imports a domain, and `import askchain` loads nothing heavy."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import askchain

SRC = Path(askchain.__file__).parent
DOMAINS = SRC / "domains"
HEAVY = ("askchain.api", "askchain.pipeline", "askchain.retrieval", "llama_cpp", "torch", "sentence_transformers",
         "langgraph", "qdrant_client")


def domain_references(source: str) -> list[int]:
    """Lines that import askchain.domains, or name a module in it as a string (for importlib or a registry)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("askchain.domains.") else []
        else:
            continue
        if any(name == "askchain.domains" or name.startswith("askchain.domains.") for name in names):
            lines.append(node.lineno)
    return lines


def test_no_module_outside_the_domains_imports_one():
    core = [path for path in SRC.rglob("*.py") if DOMAINS not in path.parents]
    assert len(core) > 50
    found = {str(path.relative_to(SRC)): domain_references(path.read_text()) for path in core}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_check_sees_every_way_of_naming_a_domain():
    source = """
import askchain.domains.ethereum
from askchain.domains.ethereum.engine import EthereumEngine
from askchain import domains
from askchain.domains import ethereum
ENGINE = "askchain.domains.ethereum.engine:EthereumEngine"
GROUP = "askchain.domains"  # the entry point group's name is not a module
import askchain.domain
"""
    assert domain_references(source) == [2, 3, 4, 5, 6]


def test_importing_askchain_loads_nothing_heavy():
    probe = "import sys, json, askchain; print(json.dumps(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(run.stdout)
    assert "askchain" in loaded
    assert [m for m in loaded if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))] == []


def test_ask_and_its_result_load_on_first_use():
    from askchain.api import ask
    from askchain.pipeline.result import AskResult

    assert askchain.ask is ask and askchain.AskResult is AskResult
    assert sorted(askchain.__all__) == ["AskResult", "ask"]
