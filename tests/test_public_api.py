"""The `ctxprobe` package's API: what `__all__` lists, type checkers see (the `TYPE_CHECKING` block of the
root `__init__.py`), and each name resolves, lazily, to the object that block names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ctxprobe

INIT = Path(ctxprobe.__file__)


def _type_checking_imports() -> dict[str, str]:
    """name -> module of every import inside `if TYPE_CHECKING:` in the root __init__.py."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.dump(stmt)
                found.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    return found


def test_all_and_the_type_checking_block_list_the_same_names() -> None:
    seen = _type_checking_imports()
    assert seen, "no TYPE_CHECKING block in ctxprobe/__init__.py"
    assert sorted(seen) == sorted(ctxprobe.__all__)


def test_each_name_resolves_to_what_the_type_checker_sees() -> None:
    import importlib

    for name, module in _type_checking_imports().items():
        assert getattr(ctxprobe, name) is getattr(importlib.import_module(module), name), name


def test_extension_points_are_exported() -> None:
    assert {"task_family", "get_family", "known_families", "Suite", "EngineAdapter"} <= set(ctxprobe.__all__)
    assert ctxprobe.get_family("niah").name == "niah"
    assert ctxprobe.EngineAdapter.__module__ == "ctxprobe.runners.engines.base"


def test_importing_ctxprobe_loads_no_heavy_module() -> None:
    code = (
        "import sys, ctxprobe; heavy = {'openai', 'pandas', 'matplotlib', 'datasets', 'httpx2'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
