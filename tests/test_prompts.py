"""Every prompt template renders with the values its callers supply, found by reading the callers' code: a placeholder
nobody fills fails here, not in the middle of a question; so does a template nobody renders, or a name two share."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

import askchain
from askchain.llm.fake import ScriptedModel
from askchain.prompts import load_prompt

SRC = Path(askchain.__file__).parent
TEMPLATES = sorted(SRC.glob("**/prompts/*.md"))


@dataclass(frozen=True)
class CallSite:
    package: str
    name: str
    values: frozenset[str]
    where: str


def _package(template: Path) -> str:
    return ".".join(template.parent.parent.relative_to(SRC.parent).parts)


def _text(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _named(call: ast.Call) -> set[str]:
    return {k.arg for k in call.keywords if k.arg}


def _is_render(call: ast.Call) -> bool:
    """load_prompt(package, name).render(...)"""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "render" and isinstance(func.value, ast.Call)
            and getattr(func.value.func, "id", None) == "load_prompt")


def _is_messages(call: ast.Call) -> bool:
    """GenerationContext.messages(package, name, **values): a stage's template after the shared prefix."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == "messages" and len(call.args) >= 2


def _functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]


def _calls(node: ast.AST) -> list[ast.Call]:
    """The calls in `node`'s body, not in the functions defined inside it (they are visited on their own)."""
    calls, todo = [], list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not isinstance(node, ast.Module):
            continue
        if isinstance(child, ast.Call):
            calls.append(child)
        todo.extend(ast.iter_child_nodes(child))
    return calls


def _argument(call: ast.Call, function: ast.FunctionDef, parameter: str):
    """The expression `call` passes for `function`'s parameter."""
    names = [a.arg for a in function.args.args]
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    index = names.index(parameter)
    return call.args[index] if index < len(call.args) else None


def call_sites() -> list[CallSite]:
    modules = {path: ast.parse(path.read_text()) for path in sorted(SRC.rglob("*.py"))}
    # what GenerationContext.messages adds to every stage template's values
    added = {
        key
        for tree in modules.values() for function in _functions(tree) if function.name == "messages"
        for call in _calls(function) if _is_render(call) for key in _named(call)
    }
    assert added, "GenerationContext.messages no longer renders a template: update this test"
    sites = []
    for path, tree in modules.items():
        where = str(path.relative_to(SRC.parent))
        for function in _functions(tree):
            for call in _calls(function):
                if function.name == "messages":  # GenerationContext.messages itself, read above
                    continue
                if _is_render(call):
                    package, name, values = *call.func.value.args, _named(call)
                elif _is_messages(call):
                    (package, name), values = call.args[:2], _named(call) | added
                else:
                    continue
                if _text(name) is not None:
                    sites.append(CallSite(_text(package), _text(name), frozenset(values), f"{where}:{call.lineno}"))
                    continue
                # the template's name is a parameter (a helper such as generation's _sample): read it at each call
                helper_calls = [c for c in _calls(tree) if getattr(c.func, "id", None) == function.name]
                assert isinstance(name, ast.Name) and helper_calls, f"{where}:{call.lineno}: which template is this?"
                for helper_call in helper_calls:
                    chosen = _text(_argument(helper_call, function, name.id))
                    assert chosen, f"{where}:{helper_call.lineno}: the template's name is not written at the call"
                    sites.append(CallSite(_text(package), chosen, frozenset(values | _named(helper_call)),
                                          f"{where}:{helper_call.lineno}"))
    return sites


SITES = call_sites()


def test_template_names_are_unique_so_scripts_can_answer_by_name():
    shared = [name for name, count in Counter(t.stem for t in TEMPLATES).items() if count > 1]
    assert not shared, f"prompt templates sharing a name: {shared}"


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: f"{_package(t)}/{t.stem}")
def test_every_template_renders_with_what_its_callers_supply(template):
    package, name = _package(template), template.stem
    sites = [site for site in SITES if (site.package, site.name) == (package, name)]
    assert sites, f"no code renders {template.relative_to(SRC.parent)}"
    for site in sites:
        try:
            prompt = load_prompt(package, name).render(**{key: f"<{key}>" for key in site.values})
        except KeyError as missing:
            pytest.fail(f"{package}/{name} needs ${missing.args[0]}, which {site.where} does not supply")
        assert prompt.template == name and all(message["content"] for message in prompt)


def test_every_rendered_template_exists():
    known = {(_package(t), t.stem) for t in TEMPLATES}
    assert [site for site in SITES if (site.package, site.name) not in known] == []


def test_the_stages_prompt_after_the_shared_prefix_keeps_its_template_name():
    from askchain.generation.context import GenerationContext

    ctx = GenerationContext("How many singers?", "sqlite", "SQLite", "CREATE TABLE singer (name TEXT)")
    prompt = ctx.messages("askchain.pipeline", "revise", sql="SELECT nam FROM singer", problem="no column nam")
    assert [m["role"] for m in prompt] == ["system", "user"] and "CREATE TABLE singer" in prompt[1]["content"]
    model = ScriptedModel({"revise": lambda request, i: request.values["sql"].replace("nam", "name")})
    assert model.complete(prompt).text == "SELECT name FROM singer"
    assert model.requests[0].values["question"] == "How many singers?"
