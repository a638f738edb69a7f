"""askchain's modules import each other without cycles, so each can be read, tested and changed after the ones it uses.

The graph is built from the source with ast. Imports count wherever they stand (module level, inside functions,
under TYPE_CHECKING): a lazy import hides a cycle from Python, not from a reader. `from askchain.x import y` is an
edge to `askchain.x.y` when that is a module, else to `askchain.x`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def package_modules(src: Path = SRC, package: str = "askchain") -> dict[str, Path]:
    """Dotted module name -> file, for every module of `package` under `src`."""
    modules = {}
    for path in (src / package).rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, source: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of `modules` that module `name` (whose code is `source`) imports anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, one level up per extra dot
                package = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found |= {target} if target in modules else ({base} if base in modules else set())
    return found - {name}


def import_graph(src: Path = SRC, package: str = "askchain") -> dict[str, set[str]]:
    modules = package_modules(src, package)
    return {
        name: imported_modules(name, path.read_text(encoding="utf-8"), path.name == "__init__.py", set(modules))
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan's strongly connected
    components of more than one module), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}}, [["a", "b"], ["c", "d"]]),
    ],
)
def test_cycles_are_found(graph, expected):
    assert cycles(graph) == expected


MODULES = {"askchain.eval", "askchain.eval.report", "askchain.eval.runner", "askchain.config", "askchain.llm.fake"}
REPORT = "askchain.eval.report"


@pytest.mark.parametrize(
    "name, is_package, source, expected",
    [
        (REPORT, False, "from askchain.eval.runner import read_results", {"askchain.eval.runner"}),
        (REPORT, False, "def f():\n    from askchain.eval import runner", {"askchain.eval.runner"}),
        (REPORT, False, "from askchain.eval import COMPARATORS", {"askchain.eval"}),
        (REPORT, False, "import askchain.config, json", {"askchain.config"}),
        (REPORT, False, "from .runner import x\nfrom .. import config", {"askchain.eval.runner", "askchain.config"}),
        ("askchain.eval", True, "from .report import write_report", {REPORT}),
        ("askchain.eval", True, "from askchain.eval.report import x\nfrom askchain.eval import y", {REPORT}),
        (REPORT, False, "if TYPE_CHECKING:\n    from askchain.llm.fake import ScriptedModel", {"askchain.llm.fake"}),
        (REPORT, False, "import numpy\nfrom askchain.nowhere import x", set()),
    ],
)
def test_imports_are_resolved_to_modules(name, is_package, source, expected):
    assert imported_modules(name, source, is_package, MODULES) == expected


def test_the_graph_covers_the_package():
    graph = import_graph()
    assert "askchain.eval.runner" in graph and "askchain.config" in graph["askchain.eval.runner"]


def test_the_import_graph_has_no_cycles():
    found = cycles(import_graph())
    assert not found, "modules importing each other: " + "; ".join(", ".join(cycle) for cycle in found)
