"""The built wheel installs one top-level name, `ctxprobe` (never the generic `tasks`, `runners`, `evals`
that other distributions claim), and its API imports from the installed copy alone."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools_at_least(major: int) -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools

    return int(setuptools.__version__.split(".")[0]) >= major


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
    assert "ctxprobe/tasks/suites/quick.yaml" in names and "ctxprobe/evals/run/api.py" in names
    assert {
        "ctxprobe/evals/report/html_report/templates/page.html.j2",
        "ctxprobe/evals/report/html_report/templates/style.css",
    } <= set(names)  # the report's templates travel as package data
    assert not any(n.startswith("ctxprobe/tests/") or n.startswith("ctxprobe/benchmarks/") for n in names)
    for init in [p for top in ("tasks", "runners", "evals") for p in (ROOT / top).rglob("__init__.py")]:
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
