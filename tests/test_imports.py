"""The import graph: no circles, and imports flow one way.

Every ``import`` and ``from … import`` in the tree counts, also those inside functions and under
``TYPE_CHECKING``: an import moved into a function to dodge a circle still is one.  ``from pkg
import sub`` where ``sub`` is a module is an edge to that module, not to the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "audio", "tools", "models", "firmware_py", "bench", "tests")

ALLOWED = {
    "audio": {"audio"},
    "tools": {"tools"},
    "models": {"models"},
    "agent": {"agent", "audio", "tools"},
    "firmware_py": {"firmware_py", "agent", "audio", "tools", "models"},
    "bench": {"bench", "firmware_py", "agent", "audio", "tools", "models"},
    "tests": set(PACKAGES),
}
"""What each top-level package may import of ours: ``audio/`` and ``tools/`` nothing, ``agent/``
their protocols, ``firmware_py/`` wires the pieces, benchmarks measure the product, tests test it all."""

HANDOFFS = {("firmware_py.cli", "bench.loop.runner")}
"""The one product module that reaches into bench: ``hearth bench`` hands its suite to the runner,
imported inside that subcommand only."""


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of ours by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> dict[str, bool]:
    """The modules of ours that ``module`` imports, each with whether the import is at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    top_level = {id(node) for node in tree.body}
    found: dict[str, bool] = {}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` imports the module pkg.sub; ``from mod import name`` imports mod.
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name, known)
            if target is not None and target != module:
                found[target] = found.get(target, False) or id(node) in top_level
    return found


def graph(root: Path = ROOT) -> dict[str, dict[str, bool]]:
    known = modules(root)
    return {module: imports_of(module, path, known) for module, path in known.items()}


def cycles(edges: dict[str, dict[str, bool]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles():
    assert cycles(graph()) == []


def test_imports_flow_one_way():
    wrong = []
    for module, targets in graph().items():
        allowed = ALLOWED[module.split(".")[0]]
        for target, at_top in targets.items():
            if target.split(".")[0] in allowed:
                continue
            if (module, target) in HANDOFFS and not at_top:
                continue
            wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_the_checks_find_what_they_look_for(tmp_path: Path):
    # A circle through a function-level import, a TYPE_CHECKING import and a relative one, and a
    # product module importing a test: each must be seen.
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__init__.py").write_text("")
    (tmp_path / "agent" / "a.py").write_text("def f():\n    from agent.b import g\n")
    (tmp_path / "agent" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n")
    (tmp_path / "agent" / "c.py").write_text("import agent.a\nfrom tests import helper\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helper.py").write_text("")
    edges = graph(tmp_path)
    assert cycles(edges) == [["agent.a", "agent.b", "agent.c"]]
    assert edges["agent.c"] == {"agent.a": True, "tests.helper": True}
    assert edges["agent.a"] == {"agent.b": False}
