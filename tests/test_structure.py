"""The package's structure: no import loops, games import only the protocol, a small public API.

The import graph is read from the source (``ast``), every ``import`` statement
counted, also those inside functions (a lazy import that closes a loop is still a
loop). Implicit imports of parent packages are not edges.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import jaxcfr

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: Source folder -> installed package name.
PACKAGES = {"jaxcfr": "jaxcfr", "games": "jaxcfr_games"}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package] + parts)] = path
    return out


def _imports(name: str, path: pathlib.Path, modules: dict) -> set[str]:
    """Project modules that module ``name`` imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # "from pkg import sub" imports the submodule pkg.sub when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:      # "import jaxcfr.x.y" of a non-module y
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_and_relative_imports():
    graph = import_graph()
    assert "jaxcfr.validate" in graph["jaxcfr.game"]          # inside Game.validate
    assert "jaxcfr_games.kuhn" in graph["jaxcfr_games"]       # "from .kuhn import ..."
    assert "jaxcfr.runs.checkpoint" in graph["jaxcfr.runs.train"]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import loops: " + "; ".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("module", sorted(m for m in import_graph()
                                          if m.startswith("jaxcfr_games.")))
def test_a_game_imports_only_the_protocol(module):
    project = {m for m in import_graph()[module] if not m.startswith("jaxcfr_games")}
    assert project <= {"jaxcfr.game"}, f"{module} imports {sorted(project)}"


def test_public_api_is_exported():
    for name in jaxcfr.__all__:
        assert hasattr(jaxcfr, name), name
    assert len(set(jaxcfr.__all__)) == len(jaxcfr.__all__)


def test_reference_games_are_installed_under_the_projects_name():
    import importlib.util

    import jaxcfr_games
    assert pathlib.Path(jaxcfr_games.__file__).parent.name == "games"
    assert importlib.util.find_spec("games") is None or pathlib.Path.cwd() == ROOT
    assert type(jaxcfr.load_game("kuhn_poker")).__module__ == "jaxcfr_games.kuhn"
    # module:Class strings, also with the repository's folder name
    assert type(jaxcfr.load_game("jaxcfr_games.leduc:LeducPoker(ranks=3)")).__name__ == \
        "LeducPoker"
    assert type(jaxcfr.load_game("games.kuhn:KuhnPoker")).__module__ == "jaxcfr_games.kuhn"
