"""Dependencies point one way: tasks <- runners <- evals, and inside evals each layer (a sub-package) imports
only the layers below it in the order docs/ARCHITECTURE.md states; no module of the package closes an import
circle (tasks, runners, evals and the root package alike). Checked on
the source, not at run time, so an import hidden inside a function counts too (no function-level import can
dodge a cycle). In the circle check an import under `if TYPE_CHECKING:` (a type only, never run) is no edge."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package folder -> the ctxprobe subpackages it must never import
FORBIDDEN = {"tasks": ("runners", "evals"), "runners": ("evals",)}

# Inside evals the layers are the sub-packages themselves (evals/records, evals/scoring, ...): a module's
# layer is the folder it sits in, read from the layout. docs/ARCHITECTURE.md states their order, bottom to top,
# on its "Layers, bottom to top:" line; each layer imports only layers before it there.
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
# What reaches past evals: the layers that keep, read and judge records drive nothing (`runners.response`, the
# client's response types, alone); only the command line imports the public API (`import ctxprobe`).
DRIVES_NOTHING = {"records", "scoring", "compare", "report"}


def documented_layers(path: Path = ARCHITECTURE) -> list[str]:
    """The evals layers in the order docs/ARCHITECTURE.md gives them, bottom to top."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Layers, bottom to top:"):
            return [name.strip(" `.") for name in line.partition(":")[2].split(",")]
    raise AssertionError(f"{path} has no 'Layers, bottom to top:' line")


def package_layers(root: Path = ROOT) -> list[str]:
    """The sub-packages of evals/ (each a layer)."""
    return sorted(p.parent.name for p in (root / "evals").glob("*/__init__.py"))


def imported_modules(path: Path, root: Path) -> list[str]:
    """Every module an `import` or `from ... import` in the file names, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ["ctxprobe", *path.relative_to(root).parent.parts]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            names.append(".".join([*base, node.module] if node.module else base))
    return names


def violations(folder: str, root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted((root / folder).rglob("*.py")):
        for name in imported_modules(path, root):
            parts = name.split(".")
            top = parts[1] if parts[0] == "ctxprobe" and len(parts) > 1 else parts[0]
            if top in FORBIDDEN[folder]:
                found.append(f"{path.relative_to(root)} imports {name}")
    return found


def layer_of(parts: list[str]) -> str:
    """The evals layer of a module, from its path parts under evals/ (`["report", "html", "render.py"]`):
    the folder it sits in. A module straight under evals/ (its `__init__` apart) is in no layer."""
    if len(parts) == 1 and parts[0] != "__init__.py":
        raise AssertionError(f"evals/{parts[0]} sits in no layer: put it in the sub-package of its role")
    return parts[0].removesuffix(".py")


def target(name: str) -> str | None:
    """What an imported ctxprobe module is to the rules: an evals layer, `runners.response`, `runners`,
    `tasks`, `api` (the root package); None for a module outside ctxprobe."""
    parts = name.split(".")
    if parts[0] != "ctxprobe":
        return None
    if len(parts) == 1:
        return "api"
    if parts[1] == "evals":
        return parts[2] if len(parts) > 2 else "evals"
    if parts[1] == "runners" and parts[2:3] == ["response"]:
        return "runners.response"
    return parts[1]


def evals_edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """(layer, imported layer or package) -> the imports that make the edge, across every evals module."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted((root / "evals").rglob("*.py")):
        source = layer_of(list(path.relative_to(root / "evals").parts))
        for name in imported_modules(path, root):
            dest = target(name)
            if dest is not None and dest != source:
                edges.setdefault((source, dest), []).append(f"{path.relative_to(root)} imports {name}")
    return edges


def broken_rules(edges: dict[tuple[str, str], list[str]], order: list[str]) -> list[str]:
    """The imports that point up the documented order, reach past what a layer may drive, or use the public
    API below the command line."""
    rank = {layer: k for k, layer in enumerate(order)}
    out = []
    for (source, dest), where in sorted(edges.items()):
        if dest in rank:
            allowed = source in rank and rank[dest] < rank[source]
        elif dest == "api":
            allowed = source == "cli"
        elif dest == "runners":
            allowed = source not in DRIVES_NOTHING
        else:  # tasks, runners.response, the package root `evals`
            allowed = dest != "evals"
        if not allowed:
            out += where
    return out


def cycle(edges: dict[tuple[str, str], list[str]]) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for source, dest in edges:
        graph.setdefault(source, set()).add(dest)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return None


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_no_import_points_back_up(folder: str) -> None:
    assert violations(folder) == []


def test_the_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "sub").mkdir(parents=True)
    (tmp_path / "tasks" / "sub" / "m.py").write_text(
        "import json\nfrom ctxprobe.tasks import sample\n"
        "def f():\n    from ctxprobe.evals.cli.main import main\n    from ...runners import endpoint\n"
    )
    assert violations("tasks", tmp_path) == [
        "tasks/sub/m.py imports ctxprobe.evals.cli.main",
        "tasks/sub/m.py imports ctxprobe.runners",
    ]


def test_every_module_of_evals_sits_in_a_layer_and_the_order_names_each_once() -> None:
    for path in (ROOT / "evals").rglob("*.py"):
        layer_of(list(path.relative_to(ROOT / "evals").parts))
    order = documented_layers()
    assert sorted(order) == package_layers() and len(set(order)) == len(order)


def test_every_evals_layer_imports_only_layers_below_it() -> None:
    assert broken_rules(evals_edges(), documented_layers()) == []


def test_the_evals_layers_form_no_cycle() -> None:
    assert cycle(evals_edges()) is None


def test_the_layer_check_catches_a_hidden_upward_import_a_cycle_and_a_flat_module(tmp_path: Path) -> None:
    for folder in ("records", "report", "run"):
        (tmp_path / "evals" / folder).mkdir(parents=True)
        (tmp_path / "evals" / folder / "__init__.py").write_text("")
    (tmp_path / "evals" / "records" / "m.py").write_text("from ctxprobe.tasks.sample import Sample\n")
    (tmp_path / "evals" / "report" / "m.py").write_text(
        "from ..records import m\nimport ctxprobe.runners.endpoint\n"
        "def f():\n    from ctxprobe.evals.run.serving import open_counter\n"
    )
    (tmp_path / "evals" / "run" / "m.py").write_text(
        "def g():\n    from ctxprobe.evals.report.html_report import render\n"
    )
    assert package_layers(tmp_path) == ["records", "report", "run"]
    edges = evals_edges(tmp_path)
    assert broken_rules(edges, ["records", "report", "run"]) == [
        "evals/report/m.py imports ctxprobe.evals.run.serving",
        "evals/report/m.py imports ctxprobe.runners.endpoint",
    ]
    assert broken_rules(edges, ["records", "run", "report"]) == [
        "evals/report/m.py imports ctxprobe.runners.endpoint",
        "evals/run/m.py imports ctxprobe.evals.report.html_report",
    ]
    assert cycle(edges) in (["report", "run", "report"], ["run", "report", "run"])
    (tmp_path / "evals" / "stray.py").write_text("")
    with pytest.raises(AssertionError, match=r"evals/stray\.py sits in no layer"):
        evals_edges(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ARCHITECTURE.md").write_text("# map\nLayers, bottom to top: `records`, `report`, `run`.\n")
    assert documented_layers(tmp_path / "docs" / "ARCHITECTURE.md") == ["records", "report", "run"]


def _runtime_imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """The module's import statements, those under `if TYPE_CHECKING:` left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in skipped]


def _module_of(path: Path, root: Path) -> str:
    parts = ["ctxprobe", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


PACKAGES = ("tasks", "runners", "evals")


def module_edges(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """ctxprobe module -> the ctxprobe modules it imports, across the packages (and the root `__init__`): a
    `from package import module` names the module; an import of a.b.c runs the package a.b's __init__ too,
    unless a.b is the importer's own package, which has begun by then."""
    paths = [p for folder in packages for p in (root / folder).rglob("*.py")]
    if (root / "__init__.py").exists():
        paths.append(root / "__init__.py")
    modules = {_module_of(p, root): p for p in paths}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in _runtime_imports(path):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                where = ".".join([*base, node.module] if node.module else base)
                targets = [f"{where}.{a.name}" if f"{where}.{a.name}" in modules else where for a in node.names]
            for target in targets:
                parts = target.split(".")
                found |= {".".join(parts[:k]) for k in range(1, len(parts) + 1)} & set(modules)
        parts = name.split(".")
        graph[name] = found - {".".join(parts[:k]) for k in range(1, len(parts) + 1)}
    return graph


def tasks_edges(root: Path = ROOT) -> dict[str, set[str]]:
    """tasks module -> the tasks modules it imports."""
    return module_edges(root, ("tasks",))


def tasks_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return None


def test_no_module_of_the_package_closes_an_import_circle() -> None:
    """Every package, imports inside functions included: a circle that a function-level import hides still
    runs both ways once that function is called."""
    assert tasks_cycle(module_edges()) is None


def test_the_package_check_catches_a_circle_across_packages_and_through_a_package_init(tmp_path: Path) -> None:
    for folder in ("tasks", "evals/compare"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "evals" / "__init__.py").write_text("")
    (tmp_path / "tasks" / "a.py").write_text("def f():\n    from ctxprobe.evals.compare.b import g\n")
    (tmp_path / "evals" / "compare" / "b.py").write_text("from ctxprobe.tasks import a\n")
    assert tasks_cycle(module_edges(tmp_path)) is not None
    (tmp_path / "evals" / "compare" / "b.py").write_text("")
    (tmp_path / "evals" / "compare" / "__init__.py").write_text("from ctxprobe.tasks.a import f\n")
    assert tasks_cycle(module_edges(tmp_path)) is not None
    (tmp_path / "tasks" / "a.py").write_text("")
    assert tasks_cycle(module_edges(tmp_path)) is None


def test_the_tasks_check_catches_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "__init__.py").write_text("")
    (tmp_path / "tasks" / "a.py").write_text("from ctxprobe.tasks import b\n")
    (tmp_path / "tasks" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ctxprobe.tasks.a import x\ndef f():\n    from . import c\n"
    )
    (tmp_path / "tasks" / "c.py").write_text("def g():\n    from ctxprobe.tasks.a import y\n")
    graph = tasks_edges(tmp_path)
    assert graph["ctxprobe.tasks.b"] == {"ctxprobe.tasks.c"}  # the type-only import is no edge
    assert tasks_cycle(graph) is not None
    (tmp_path / "tasks" / "c.py").write_text("")
    assert tasks_cycle(tasks_edges(tmp_path)) is None
