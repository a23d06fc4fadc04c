"""`compare_folders(baseline, *candidates)`, what `ctxprobe.compare` (evals/report/pages.py) runs before it adds
the report page: pair each candidate run with the baseline sample by sample,
table the paired differences, Holm-adjust, apply the `fail_if_drop` gate, and (unless `write=False`) write
compare.md / .csv / .json and diff heatmaps to a new `results/<time>-compare-<labels>/` folder."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.compare.gate import GateRefused, gate_problems
from ctxprobe.evals.compare.paired.kl import kl_comparison
from ctxprobe.evals.compare.paired.kl_gate import KL_MARGIN, check_margin, floor_warning
from ctxprobe.evals.compare.paired.p_answer import METRICS, Metric
from ctxprobe.evals.compare.paired.pairing import pair_runs
from ctxprobe.evals.compare.paired.rows import compare_rows
from ctxprobe.evals.compare.paired.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, INTERVAL_METHOD
from ctxprobe.evals.compare.paired.verdict import (
    adjust_gate,
    compare_verdict,
    correct_evidence,
    examples,
    failing_rows,
    p_answer_evidence,
    sequential_gate,
)
from ctxprobe.evals.compare.sequential.betting import CS_METHOD
from ctxprobe.evals.compare.signals import moved_signals
from ctxprobe.evals.records.compare import CandidatePairing, CompareResult, CompareRow, RunInput
from ctxprobe.evals.records.kl import KLComparison, find_row
from ctxprobe.evals.records.load import Run, load_run
from ctxprobe.tasks.errors import UserError

PARTIAL_METHOD = f"paired percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}"
P_METHOD = (
    "exact McNemar (two-sided binomial on discordant pairs); weighted Holm over each candidate's pooled "
    "family rows (primary, 80% of alpha) and family x length rows"
)
ANYTIME_P_METHOD = (
    "anytime-valid (betting e-values against no drop and no gain, two-sided); weighted Holm over each "
    "candidate's pooled family rows (primary, 80% of alpha) and family x length rows; the gate judges "
    "as run --against does (one-sided: FAIL against no drop, PASS against the margin)"
)

__all__ = [
    "CandidatePairing",
    "CompareResult",
    "RunInput",
    "compare_folders",
    "compare_runs",
    "labels_for",
    "run_input",
]


def run_input(run: Run, label: str) -> RunInput:
    m = run.manifest
    return RunInput(
        path=str(run.dir),
        label=label,
        suite=m.suite.name,
        status=m.status,
        created=m.created,
        tokenizer=m.tokenizer,
        token_counter=m.token_counter,
        model=m.model,
        engine=m.engine,
        samples=len(run.records),
        engine_fault=m.cache_check.line() if m.cache_check is not None and m.cache_check.fault else None,
    )


def labels_for(runs: list[Run]) -> list[str]:
    """Each run's label, or its folder name where the label is empty or shared with another run."""
    labels = [r.manifest.label or r.dir.name for r in runs]
    return [lab if labels.count(lab) == 1 else r.dir.name for lab, r in zip(labels, runs)]


def compare_runs(
    base: Run,
    cands: list[Run],
    alpha: float = 0.05,
    fail_if_drop: float | None = None,
    metric: Metric = "correct",
    kl_margin: float = KL_MARGIN,
) -> CompareResult:
    """The comparison of loaded runs, written nowhere (history calls this for each night). `metric` is what
    the gate judges: correctness, the answer probability's paired difference (`p_answer`, judged by the
    paired gate's betting rule, valid for fixed and adaptive runs alike), or KL at the answer positions
    against `kl_margin` nats (`kl`: the KL gate, `evals.paired.kl_gate`, which judges without
    `fail_if_drop`); every one the records have is tabled either way."""
    if not cands:
        raise UserError("compare needs a baseline and at least one candidate run")
    if not 0.0 < alpha < 1.0:
        raise UserError(f"--alpha must be between 0 and 1, got {alpha}")
    if fail_if_drop is not None and not 0.0 <= fail_if_drop < 1.0:
        raise UserError(f"--fail-if-drop must be between 0 and 1, got {fail_if_drop}")
    if metric not in METRICS:
        raise UserError(f"--metric must be one of {', '.join(METRICS)}, got {metric!r}")
    try:
        check_margin(kl_margin)
    except ValueError as e:
        raise UserError(str(e)) from None
    labels = labels_for([base, *cands])
    problems = gate_problems(base, cands, labels)
    gated = fail_if_drop is not None or metric == "kl"
    if problems and gated:
        raise GateRefused(
            f"the {'--metric kl' if metric == 'kl' else '--fail-if-drop'} gate cannot judge: {'; '.join(problems)}"
        )
    pairings, rows, found, warnings = [], [], [], list(problems)
    warnings += [
        f"ENGINE FAULT in {label}: {run.manifest.cache_check.line()} (compare what it scored with care)"
        for label, run in zip(labels, (base, *cands))
        if run.manifest.cache_check is not None and run.manifest.cache_check.fault
    ]
    if metric == "kl":
        warnings += [
            w
            for label, run in zip(labels, (base, *cands))
            if (
                w := floor_warning(
                    label, run.manifest.cache_check.kl_max if run.manifest.cache_check else None, kl_margin
                )
            )
        ]
    anytime = any(r.manifest.stop or r.manifest.paired_gate for r in (base, *cands))  # stopped adaptively
    failed: list[CompareRow] = []
    kl_pairs = []
    # runs that stopped adaptively are gated by the paired gate's own rule, so both agree on the same pairs
    # and so is p_answer, whose statistics are the paired gate's betting ones for any run
    passed: list[CompareRow] | None = [] if fail_if_drop is not None and (anytime or metric == "p_answer") else None
    gate_rows: list[CompareRow] = []
    for label, cand in zip(labels[1:], cands):
        pairing = pair_runs(base, cand)
        if pairing.prompts_differ:
            warnings.append(
                f"PROMPTS DIFFER: {pairing.by_task} of {len(pairing.pairs)} pairs of {label} matched by "
                f"task fields only (another tokenizer: {base.manifest.tokenizer or '?'} vs "
                f"{cand.manifest.tokenizer or '?'}); the builds did not read the same text"
            )
        pooled = adjust_gate(
            compare_rows(label, pairing.pairs, "family", anytime, alpha)
            + compare_rows(label, pairing.pairs, "family_length", anytime, alpha),
            alpha,
        )
        rows += compare_rows(label, pairing.pairs, "cell", anytime, alpha) + pooled
        if metric == "p_answer" and not any(r.p_answer for r in pooled):  # as --metric kl: refused, not "none"
            raise GateRefused(
                f"the --metric p_answer gate cannot judge {label}: no pair has answer probabilities "
                "on both sides (run both builds with --logprobs, on an engine that gives them)"
            )
        if passed is not None:
            evidence = (
                p_answer_evidence(pooled, pairing.pairs)
                if metric == "p_answer"
                else correct_evidence(pooled, pairing.pairs)
            )
            fails, passes = sequential_gate(pooled, fail_if_drop or 0.0, alpha, evidence)
            failed, passed = failed + fails, passed + passes
        gate_rows += pooled
        found += examples(label, pairing.pairs, pooled)
        kl_pairs.append((label, pairing.pairs))
        pairings.append(
            CandidatePairing(
                candidate=label,
                pairs=len(pairing.pairs),
                by_prompt=pairing.by_prompt,
                by_task=pairing.by_task,
                errored_base=pairing.errored_base,
                errored_cand=pairing.errored_cand,
                unpaired_base=pairing.unpaired_base,
                unpaired_cand=pairing.unpaired_cand,
            )
        )
    if fail_if_drop is not None and passed is None:
        failed = failing_rows(rows, fail_if_drop, alpha)
    kl = kl_comparison(kl_pairs, (kl_margin, alpha) if metric == "kl" else None)
    if metric == "kl":
        failed, passed = kl_verdict_rows(kl, gate_rows)
    drops = failed if gated else failing_rows(rows, 0.0, alpha)  # ungated: each significant drop
    pairings = [
        p.model_copy(update={"signals": moved_signals(base, cand, pairs, [r for r in drops if r.candidate == label])})
        for p, cand, (label, pairs) in zip(pairings, cands, kl_pairs)
    ]
    result = CompareResult(
        baseline=run_input(base, labels[0]),
        candidates=[run_input(c, lab) for c, lab in zip(cands, labels[1:])],
        alpha=alpha,
        fail_if_drop=fail_if_drop,
        interval_method=CS_METHOD if anytime else INTERVAL_METHOD,
        p_method=ANYTIME_P_METHOD if anytime else P_METHOD,
        partial_method=PARTIAL_METHOD,
        pairings=pairings,
        rows=rows,
        examples=found,
        failed=failed,
        passed=passed,
        warnings=warnings,
        sequential=anytime,
        metric=metric,
        kl=kl,
    )
    return result.model_copy(update={"verdict": compare_verdict(result)})


def kl_verdict_rows(kl: KLComparison, gate_rows: list[CompareRow]) -> tuple[list[CompareRow], list[CompareRow]]:
    """The compare rows whose KL row the KL gate FAILs, and those it PASSes (a compare row with no pair to
    compare position by position has no KL row: undecided). Refused when no candidate has such a pair."""
    if not kl.computed():
        raise GateRefused(
            "the --metric kl gate cannot judge: no pair has answer log-probabilities with top-k "
            "alternatives on both sides (run both builds with --logprobs, on an engine that gives them)"
        )
    keyed = [
        (
            row.verdict
            if (row := find_row(kl, r.candidate, r.level, r.family, r.variant, r.haystack, r.context_tokens))
            else None,
            r,
        )
        for r in gate_rows
    ]
    return [r for v, r in keyed if v == "FAIL"], [r for v, r in keyed if v == "PASS"]


def compare_folders(
    baseline: str | Path,
    *candidates: str | Path,
    alpha: float = 0.05,
    fail_if_drop: float | None = None,
    results_dir: str | Path = "results",
    write: bool = True,
    metric: Metric = "correct",
    kl_margin: float = KL_MARGIN,
) -> CompareResult:
    """Compare candidate run folders with a baseline run folder and write the outputs unless `write=False`
    (the page beside them is the report's: `ctxprobe.compare`, in `evals.report.pages`, adds it).
    `result.exit_code` is the gate's: 1 when a candidate drops by more than `fail_if_drop` significantly (in
    accuracy, or with `metric="p_answer"` in answer probability), or with `metric="kl"` when its mean KL is
    above `kl_margin` nats; 6 when it is UNDECIDED (`result.gate_exit_code` maps that as `run --undecided`
    does). With the gate, runs it cannot judge (not finished, the baseline itself, another suite) raise
    `GateRefused` (exit code 5)."""
    runs = [load_run(p) for p in (baseline, *candidates)]
    result = compare_runs(runs[0], runs[1:], alpha, fail_if_drop, metric, kl_margin)
    if not write:
        return result
    from ctxprobe.evals.compare.outputs import write_outputs

    return write_outputs(result, Path(results_dir))
