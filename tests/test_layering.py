"""Dependencies point one way: tasks <- runners <- evals. Checked on the source, not at run time, so an
import hidden inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package folder -> the ctxprobe subpackages it must never import
FORBIDDEN = {"tasks": ("runners", "evals"), "runners": ("evals",)}


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


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_no_import_points_back_up(folder: str) -> None:
    assert violations(folder) == []


def test_the_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "sub").mkdir(parents=True)
    (tmp_path / "tasks" / "sub" / "m.py").write_text(
        "import json\nfrom ctxprobe.tasks import sample\n"
        "def f():\n    from ctxprobe.evals.cli import main\n    from ...runners import endpoint\n")
    assert violations("tasks", tmp_path) == ["tasks/sub/m.py imports ctxprobe.evals.cli",
                                             "tasks/sub/m.py imports ctxprobe.runners"]
