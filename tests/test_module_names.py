"""No module of the package is named like a standard-library module: a script run beside it (`python
runners/gguf_to_hf.py`) puts its folder first on `sys.path`, and `import tokenize` there would find ours."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tasks", "runners", "evals")


def stdlib_named(root: Path = ROOT) -> list[str]:
    """The modules and packages under the packages whose name is a standard-library module's."""
    paths = [p for folder in PACKAGES for p in (root / folder).rglob("*.py") if p.name != "__init__.py"]
    names = {p.relative_to(root): p.stem for p in paths}
    names |= {
        p.parent.relative_to(root): p.parent.name for folder in PACKAGES for p in (root / folder).rglob("__init__.py")
    }
    return sorted(str(where) for where, name in names.items() if name in sys.stdlib_module_names)


def test_no_module_shadows_the_standard_library() -> None:
    assert stdlib_named() == []


def test_the_check_finds_a_module_and_a_package_named_like_the_standard_library(tmp_path: Path) -> None:
    (tmp_path / "runners" / "json").mkdir(parents=True)
    (tmp_path / "runners" / "json" / "__init__.py").write_text("")
    (tmp_path / "runners" / "tokenize.py").write_text("")
    (tmp_path / "runners" / "token_counts.py").write_text("")
    assert stdlib_named(tmp_path) == ["runners/json", "runners/tokenize.py"]
