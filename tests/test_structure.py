"""The package's structure: folders that are layers, no import loops, games import only the
protocol, a small public API.

The import graph is read from the source (``ast``), every ``import`` statement
counted, also those inside functions (a lazy import that closes a loop is still a
loop). Implicit imports of parent packages are not edges.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

import jaxcfr

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: Source folder -> installed package name.
PACKAGES = {"jaxcfr": "jaxcfr", "games": "jaxcfr_games"}

#: The layers: each room of ``jaxcfr`` (a folder, or the module ``tensors``) -> the rooms it
#: may import. Low to high: _util < game < tensors < lowering | kernels < solvers < profiles <
#: engine < api < subgames < runs < cli. Each folder's ``__init__`` says the same in words.
LAYERS = {
    "_util": set(),
    "game": {"_util"},
    "tensors": {"_util", "game"},
    "lowering": {"_util", "game", "tensors"},
    "kernels": {"_util", "game", "tensors"},
    "solvers": {"_util", "game", "tensors", "kernels"},
    "profiles": {"_util", "game", "tensors", "lowering", "kernels", "solvers"},
    "engine": {"_util", "game", "tensors", "lowering", "kernels", "solvers", "profiles"},
    "api": {"_util", "game", "tensors", "lowering", "kernels", "solvers", "profiles", "engine"},
    "subgames": {"_util", "game", "tensors", "lowering", "kernels", "solvers", "profiles",
                 "engine", "api"},
    "runs": {"_util", "game", "tensors", "lowering", "kernels", "solvers", "profiles", "engine",
             "api", "subgames"},
    "cli": {"_util", "game", "tensors", "lowering", "kernels", "solvers", "profiles", "engine",
            "api", "subgames", "runs"},
}
#: Modules outside the layers: the package's face imports every layer, ``python -m jaxcfr``
#: the command line, ``jaxcfr.efg`` is the public name of the game layer's .efg package.
ABOVE_THE_LAYERS = {"jaxcfr": set(LAYERS), "jaxcfr.__main__": {"cli"}, "jaxcfr.efg": {"game"}}


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


def import_graph() -> dict[str, frozenset[str]]:
    """Each module's project imports, parsed once per test process (every game's case
    reads it: parsing the tree again per case cost 1.5 CPU-s each)."""
    return dict(_import_graph())


@functools.cache
def _import_graph() -> dict[str, frozenset[str]]:
    modules = _modules()
    return {name: frozenset(_imports(name, path, modules)) for name, path in modules.items()}


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
    assert "jaxcfr.game.validate" in graph["jaxcfr.game.protocol"]   # inside Game.validate
    assert "jaxcfr_games.kuhn" in graph["jaxcfr_games"]       # "from .kuhn import ..."
    assert "jaxcfr.runs.checkpoint" in graph["jaxcfr.runs.train"]


def room(module: str) -> str | None:
    """The layer of a ``jaxcfr`` module (``jaxcfr.solvers.solver`` -> ``solvers``)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "jaxcfr" and len(parts) > 1 and parts[1] != "__main__" \
        else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that runs against :data:`LAYERS` (``a -> b``: a may not import b)."""
    out = []
    for module, targets in sorted(graph.items()):
        if not module.startswith("jaxcfr") or module.startswith("jaxcfr_games"):
            continue
        if module in ABOVE_THE_LAYERS:
            allowed, own = ABOVE_THE_LAYERS[module], None
        else:
            own = room(module)
            allowed = LAYERS.get(own, set())
        for t in sorted(targets):
            if t.startswith("jaxcfr_games"):
                continue
            r = room(t)
            if r != own and r not in allowed:
                out.append(f"{module} -> {t} ({own or module} may not import {r})")
    return out


def test_every_module_is_in_a_layer():
    rooms = {room(m) for m in import_graph() if m.startswith("jaxcfr.")
             and m not in ABOVE_THE_LAYERS} - {None}
    assert rooms <= set(LAYERS), f"rooms missing from LAYERS: {sorted(rooms - set(LAYERS))}"
    for name in LAYERS:
        path = ROOT / "jaxcfr" / name
        init = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        assert init.exists(), name
        if path.is_dir():
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            assert "may import" in doc or "imports nothing" in doc, \
                f"{init} does not say what it may import"


def test_no_public_name_hides_a_room():
    # jaxcfr.cfr is the vanilla-CFR preset: a folder of that name would be unreachable as an
    # attribute (jaxcfr.cfr.analytics), and string paths such as monkeypatch's would break
    import types
    for name in LAYERS:
        value = getattr(jaxcfr, name, None)
        assert value is None or isinstance(value, types.ModuleType), \
            f"jaxcfr.{name} is {value!r}, not the room {name}"


def test_imports_follow_the_layers():
    bad = layer_violations(import_graph())
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_layer_check_sees_an_upward_import():
    graph = {"jaxcfr.solvers.solver": {"jaxcfr.engine.runner"},
             "jaxcfr.engine.runner": {"jaxcfr.solvers.solver"}, "jaxcfr": {"jaxcfr.cli.app"}}
    assert layer_violations(graph) == [
        "jaxcfr.solvers.solver -> jaxcfr.engine.runner (solvers may not import engine)"]


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


def test_no_caller_asks_which_runner_it_has():
    """The run loop, solve and train use the runner protocol; nothing outside the engine
    switches on a runner's type (isinstance / type() of Runner or SampledChanceRunner)."""
    names = {"Runner", "SampledChanceRunner"}
    found = []
    for name, path in _modules().items():
        if not name.startswith("jaxcfr.") or name.startswith("jaxcfr.engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "type")):
                used = {n.id for a in node.args[1:] for n in ast.walk(a)
                        if isinstance(n, ast.Name)} | \
                       {n.attr for a in node.args[1:] for n in ast.walk(a)
                        if isinstance(n, ast.Attribute)}
                if used & names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "switches on a runner's type: " + ", ".join(found)


def test_the_wheel_holds_the_license_py_typed_and_the_configs(tmp_path):
    """What pyproject declares for the wheel (issue 33, item 8), and the wheel itself where
    this environment can build one offline (setuptools with bdist_wheel)."""
    import subprocess
    import sys
    import tomllib
    import zipfile
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert (ROOT / "jaxcfr" / "py.typed").is_file()
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["license-files"] == ["LICENSE"] and "jaxcfr.configs" in tool["packages"]
    assert tool["package-dir"]["jaxcfr.configs"] == "configs"
    assert "py.typed" in tool["package-data"]["jaxcfr"]
    assert "*.toml" in tool["package-data"]["jaxcfr.configs"]
    try:
        import setuptools.command.bdist_wheel  # noqa: F401 - setuptools >= 70.1
    except ImportError:
        try:
            import wheel  # noqa: F401
        except ImportError:
            return                                 # no offline wheel builder here
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                          "--no-build-isolation", "-q", str(ROOT), "-w", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    names = zipfile.ZipFile(next(tmp_path.glob("jaxcfr-*.whl"))).namelist()
    assert "jaxcfr/py.typed" in names and any(n.endswith("/LICENSE") for n in names)
    configs = {p.name for p in (ROOT / "configs").glob("*.toml")}
    assert configs and configs <= {n.rpartition("/")[2] for n in names
                                   if n.startswith("jaxcfr/configs/")}


def test_every_benchmark_program_is_listed_and_the_helpers_are_no_programs():
    """benchmarks/README.md's table names every program of benchmarks/ (and benchmarks/peers/)
    and nothing that is not there; benchmarks/benchkit/ holds no program."""
    folder = ROOT / "benchmarks"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([\w/]+\.py)`", row.split(" | ")[0])}
    programs = {p.name for p in folder.glob("*.py")} | \
        {f"peers/{p.name}" for p in (folder / "peers").glob("*.py")}
    assert programs == named
    for path in (folder / "benchkit").rglob("*.py"):
        assert "__main__" not in path.read_text(encoding="utf-8"), path
