"""The built wheel installs one top-level name, `ctxprobe` (never the generic `tasks`, `runners`, `evals`
that other distributions claim), and its API imports from the installed copy alone. Building it takes
seconds, so that is the slow tier's; the fast tier checks what the build is made from, pyproject's package
list and package data, which is where a new subpackage is forgotten."""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_DATA = (  # files the package reads at run time, not Python
    "tasks/suites/quick.yaml",
    "evals/report/html_report/templates/page.html.j2",
    "evals/report/html_report/templates/style.css",
)


def _setuptools_at_least(major: int) -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools

    return int(setuptools.__version__.split(".")[0]) >= major


def _packaged_inits() -> list[Path]:
    return [p for top in ("tasks", "runners", "evals") for p in (ROOT / top).rglob("__init__.py")]


def test_pyproject_packages_every_subpackage_under_ctxprobe_with_its_data() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"ctxprobe": "."}
    listed = set(setuptools["packages"])
    assert all(name == "ctxprobe" or name.startswith("ctxprobe.") for name in listed)
    found = {"ctxprobe"} | {"ctxprobe." + ".".join(i.parent.relative_to(ROOT).parts) for i in _packaged_inits()}
    assert listed == found  # every subpackage listed, and nothing listed that is no package
    data = {
        f"{package.removeprefix('ctxprobe.').replace('.', '/')}/{pattern}"
        for package, patterns in setuptools["package-data"].items()
        for pattern in patterns
    }
    for shipped in SHIPPED_DATA:
        assert (ROOT / shipped).is_file() and any(fnmatch.fnmatch(shipped, glob) for glob in data), shipped


@pytest.mark.slow
def test_wheel_top_level_is_ctxprobe_only_and_its_api_imports(tmp_path: Path) -> None:
    isolation = ["--no-build-isolation"] if _setuptools_at_least(68) else []  # else pip fetches a build env
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wheel = next(tmp_path.glob("ctxprobe-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"ctxprobe"}
    assert "ctxprobe/evals/run/api.py" in names
    assert {f"ctxprobe/{shipped}" for shipped in SHIPPED_DATA} <= set(names)  # they travel as package data
    assert not any(n.startswith("ctxprobe/tests/") or n.startswith("ctxprobe/benchmarks/") for n in names)
    for init in _packaged_inits():
        assert f"ctxprobe/{init.relative_to(ROOT).as_posix()}" in names, f"{init.parent} is not packaged"
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    code = "import ctxprobe; assert callable(ctxprobe.run) and callable(ctxprobe.load_run); print(ctxprobe.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(target)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(target))
