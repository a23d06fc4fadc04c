"""The endpoint client works with the lowest versions pyproject admits: a fresh virtual environment gets
exactly the declared floors of openai, httpx2 and pydantic from the package registry (no system site
packages, nothing else of ctxprobe's), and sends prompts through `EndpointClient` to the fake engine
(`floor_client.py`). Needs the package registry; deselect with `-m "not floors"`."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CLIENT_DEPENDENCIES = ("openai", "httpx2", "pydantic")


def declared_floors() -> dict[str, str]:
    """name -> the `>=` version pyproject declares for it."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    floors = {}
    for dep in deps:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)(,.*)?", dep.replace(" ", ""))
        assert match, f"dependency {dep!r} has no >= floor"
        floors[match.group(1).lower()] = match.group(2)
    return floors


def test_every_client_dependency_has_a_floor() -> None:
    assert set(CLIENT_DEPENDENCIES) <= set(declared_floors())


@pytest.mark.floors
@pytest.mark.timeout(600)
def test_the_endpoint_client_works_at_the_declared_floors(tmp_path: Path) -> None:
    floors = declared_floors()
    env_dir = tmp_path / "floor-env"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    pins = [f"{name}=={floors[name]}" for name in CLIENT_DEPENDENCIES]
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins],
        check=True,
        capture_output=True,
        text=True,
        timeout=540,
    )
    freeze = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"], check=True, capture_output=True, text=True
    ).stdout
    installed = dict(line.lower().split("==", 1) for line in freeze.splitlines() if "==" in line)
    assert {n: Version(installed[n]) for n in CLIENT_DEPENDENCIES} == {
        n: Version(floors[n]) for n in CLIENT_DEPENDENCIES
    }, freeze
    src = tmp_path / "src"
    src.mkdir()
    (src / "ctxprobe").symlink_to(ROOT, target_is_directory=True)  # the project's source, not an install
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [str(python), str(ROOT / "tests" / "packaging" / "floor_client.py")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # e.g. a stream that cannot be closed cleanly
