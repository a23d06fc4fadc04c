"""The verbs whose outputs end in an HTML page. `ctxprobe.report(paths, output)`: the page of run, limit,
compare and history folders, and of a results folder of runs, whose history is computed on the spot.
`ctxprobe.compare(...)`: compare's outputs (computed and written in `evals.compare`) and the page of their
folder. The page reads only what the records layer defines; comparing is compare's, so the two meet here,
above both."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare import api as compare_api
from ctxprobe.evals.compare.history import history
from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN
from ctxprobe.evals.compare.paired.p_answer import Metric
from ctxprobe.evals.records.compare import CompareResult
from ctxprobe.evals.report.html_report import render
from ctxprobe.evals.report.html_report.render import REPORT_HTML

__all__ = ["compare", "report"]


def _history_of(results_dir: Path) -> dict[str, Any]:
    return history(results_dir, write=False).model_dump(mode="json")


def report(paths: Sequence[str | Path] | str | Path, output: str | Path = REPORT_HTML) -> Path:
    """Render the folders (in the order given) into one self-contained HTML file at `output`; returns its path."""
    return render.report(paths, output, history_of=_history_of)


def compare(
    baseline: str | Path,
    *candidates: str | Path,
    alpha: float = 0.05,
    fail_if_drop: float | None = None,
    results_dir: str | Path = "results",
    write: bool = True,
    html_report: bool = True,
    metric: Metric = "correct",
    kl_margin: float = KL_MARGIN,
) -> CompareResult:
    """Compare candidate run folders with a baseline run folder; write the outputs (and `report.html`
    unless `html_report=False`) unless `write=False`. `result.exit_code` is the gate's: 1 when a candidate
    drops by more than `fail_if_drop` significantly (in accuracy, or with `metric="p_answer"` in answer
    probability), or with `metric="kl"` when its mean KL is above `kl_margin` nats; 6 when it is UNDECIDED
    (`result.gate_exit_code` maps that as `run --undecided` does). With the gate, runs it cannot judge (not
    finished, the baseline itself, another suite) raise `GateRefused` (exit code 5)."""
    written = compare_api.compare_folders(
        baseline,
        *candidates,
        alpha=alpha,
        fail_if_drop=fail_if_drop,
        results_dir=results_dir,
        write=write,
        metric=metric,
        kl_margin=kl_margin,
    )
    if write and html_report and written.out_dir:
        page = render.write_folder_report(written.out_dir)
        written = written.model_copy(update={"files": [*written.files, str(page)]})
    return written
