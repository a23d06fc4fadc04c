"""Run the ctxprobe CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ctxprobe(*args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxprobe.evals.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _as_in_a_terminal() -> None:
    """SIGINT back to its default action, as in a terminal: a shell that starts jobs in the background
    (such as a CI runner's) sets it to ignored, which children inherit, and Python then never raises
    KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def popen(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ctxprobe.evals.cli.main", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=_as_in_a_terminal,
    )


def only_run_dir(results: Path) -> Path:
    dirs = [p for p in results.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]
