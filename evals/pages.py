"""`ctxprobe.report(paths, output)`: the HTML page of run, limit, compare and history folders, and of a
results folder of runs, whose history is computed on the spot. The report reads only what the log layer
defines; computing a history is compare's, so the two meet here, above both."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare.history import history
from ctxprobe.evals.report.html import render
from ctxprobe.evals.report.html.render import REPORT_HTML

__all__ = ["report"]


def _history_of(results_dir: Path) -> dict[str, Any]:
    return history(results_dir, write=False).model_dump(mode="json")


def report(paths: Sequence[str | Path] | str | Path, output: str | Path = REPORT_HTML) -> Path:
    """Render the folders (in the order given) into one self-contained HTML file at `output`; returns its path."""
    return render.report(paths, output, history_of=_history_of)
