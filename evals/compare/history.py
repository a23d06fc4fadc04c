"""`ctxprobe.history(results_dir)`: every finished run of one suite over time (by manifest `created`),
accuracy per family x length with Clopper-Pearson intervals and errors, and each night compared with the one before
by the paired test of `compare`, its significant drops flagged with the signals that moved with them
(`evals.compare.signals`).

It reads the run folders as they are, every time: a folder counts when its manifest.json says it is a
finished run (compare and history folders have none), so there is no index to go stale or rebuild."""

from __future__ import annotations

import itertools
from pathlib import Path

from ctxprobe.evals.compare.accuracy import context_summary
from ctxprobe.evals.compare.api import compare_runs, run_input
from ctxprobe.evals.compare.gate import GateRefused
from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN
from ctxprobe.evals.compare.paired.kl_text import kl_number
from ctxprobe.evals.compare.paired.p_answer import Metric
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import CompareResult, CompareRow
from ctxprobe.evals.records.history import HistoryPoint, HistoryResult, NightStep
from ctxprobe.evals.records.kl import find_row
from ctxprobe.evals.records.load import Run, load_run
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.store import MANIFEST, RunStore
from ctxprobe.tasks.errors import UserError

__all__ = ["HistoryPoint", "HistoryResult", "NightStep", "finished_runs", "history"]


def finished_runs(
    results_dir: Path, label: str | None, suite: str | None
) -> tuple[list[tuple[Path, RunManifest]], list[str]]:
    """Finished run folders under `results_dir` (matching label and suite), oldest first, and the folders
    left out with why: an unreadable manifest, or a matching run that did not finish (killed, interrupted,
    endpoint lost, failed), which is never counted as a night."""
    if not results_dir.is_dir():
        raise UserError(f"not a folder: {results_dir}")
    found, skipped = [], []
    for folder in sorted(p for p in results_dir.iterdir() if (p / MANIFEST).is_file()):
        try:
            manifest = RunStore(folder).load_manifest()
        except UserError as exc:
            skipped.append(f"{folder.name}: {exc}")
            continue
        if manifest.command != "run" or label not in (None, manifest.label) or suite not in (None, manifest.suite.name):
            continue
        if manifest.status == "finished":
            found.append((folder, manifest))
        else:
            done = sum(1 for r in RunStore(folder).latest_records(needles=False).values() if r.error is None)
            skipped.append(
                f"{folder.name}: not finished (status {manifest.status}, {done} of "
                f"{manifest.samples_planned or '?'} samples done)"
            )
    return sorted(found, key=lambda fm: fm[1].created), skipped


def history(
    results_dir: str | Path,
    label: str | None = None,
    suite: str | None = None,
    alpha: float = 0.05,
    write: bool = True,
    metric: Metric = "correct",
    kl_margin: float = KL_MARGIN,
) -> HistoryResult:
    """The history of one suite's finished runs in `results_dir`; with `write`, history.md / history.json
    and a trend PNG in `results_dir/history-<suite>/` (replaced each time). `metric` flags a night: a
    significant drop in accuracy (the default) or in p_answer, or a mean KL above `kl_margin` nats
    (`compare --metric`'s gates, margin 0 for the first two)."""
    found, skipped = finished_runs(Path(results_dir), label, suite)
    suites = sorted({m.suite.name for _, m in found})
    if not suites:
        raise UserError(
            f"no finished run in {results_dir}"
            + (f" with label {label!r}" if label else "")
            + (f" of suite {suite!r}" if suite else "")
        )
    if len(suites) > 1:
        raise UserError(f"runs of several suites in {results_dir} ({', '.join(suites)}): choose one with --suite")
    runs = [load_run(folder) for folder, _ in found]
    labels = [r.dir.name for r in runs]  # `<time>-<label>`: unique, and names the night
    result = HistoryResult(
        suite=suites[0],
        alpha=alpha,
        metric=metric,
        kl_margin=kl_margin if metric == "kl" else None,
        runs=[run_input(r, lab) for r, lab in zip(runs, labels)],
        points=[p for r, lab in zip(runs, labels) for p in _points(r, lab)],
        steps=[_step(a, b, alpha, metric, kl_margin) for a, b in itertools.pairwise(runs)],
        skipped=skipped,
    )
    if not write:
        return result
    from ctxprobe.evals.compare.history_outputs import write_history

    return write_history(result, Path(results_dir))


def _points(run: Run, label: str) -> list[HistoryPoint]:
    if not run.records:
        return []
    table = context_summary(run.records)
    return [
        HistoryPoint(
            run=str(run.dir),
            label=label,
            created=run.manifest.created,
            family=r.family,
            variant=r.variant,
            haystack=r.haystack,
            context_tokens=int(r.context_tokens),
            n=int(r.n),
            correct=int(r.correct),
            accuracy=None if r.n == 0 else float(r.accuracy),
            ci_lo=float(r.ci_lo),
            ci_hi=float(r.ci_hi),
            errors=int(r.errors),
        )
        for r in table.itertuples(index=False)
    ]


def _step(
    previous: Run, current: Run, alpha: float, metric: Metric = "correct", kl_margin: float = KL_MARGIN
) -> NightStep:
    """The paired test of `compare`, gate margin 0 (for kl: `kl_margin`): any row the gate fails is flagged."""
    step = NightStep(previous=str(previous.dir), current=str(current.dir))
    try:
        compared = compare_runs(previous, [current], alpha=alpha, fail_if_drop=0.0, metric=metric, kl_margin=kl_margin)
    except (UserError, GateRefused) as exc:
        return step.model_copy(update={"note": str(exc)})
    return step.model_copy(
        update={
            "pairs": compared.pairings[0].pairs,
            "rows": compared.family_rows(),
            "drops": compared.failed,
            "flagged": [_flag(compared, r) for r in compared.failed],
            "signals": compared.pairings[0].signals,
            "note": "; ".join(compared.warnings) or None,
        }
    )


def _flag(compared: CompareResult, row: CompareRow) -> str:
    """A flagged row as the night's line says it, in the history's metric."""
    if compared.metric == "kl":
        kl = find_row(compared.kl, row.candidate, row.level, row.family, row.variant, row.haystack, row.context_tokens)
        return f"{row.where()} KL {kl_number(kl.kl if kl else float('nan'))} nats"
    if compared.metric == "p_answer" and row.p_answer is not None:
        return f"{row.where()} p_answer {signed(row.p_answer.diff, 1)} points (anytime-valid)"
    return f"{row.where()} {signed(row.diff)} points (p_holm {row.p_holm:.3g})"
