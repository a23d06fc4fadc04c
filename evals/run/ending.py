"""How a run ended, said in one line with its exit code: finished, samples in error, the endpoint lost, a
file not written, interrupted, or the paired gate's verdict."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.records.write_errors import WriteFailed
from ctxprobe.evals.run.result import ExitCode, RunResult
from ctxprobe.evals.run.resume import CAPPED
from ctxprobe.evals.run.send.loop import Progress
from ctxprobe.evals.run.send.options import OutputOptions
from ctxprobe.runners.retry import DEFAULT_TIMEOUT_S
from ctxprobe.tasks.exit_codes import Undecided, gate_exit_code


def write_failed_result(store: RunStore, manifest: RunManifest, progress: Progress, failed: WriteFailed) -> RunResult:
    planned = manifest.samples_planned or 0
    done, errored = manifest.samples_done or 0, manifest.samples_errored or 0
    msg = (
        f"{failed}; the run stopped: {done} samples done and {errored} errored are kept in {store.dir}, "
        f"{planned - done - errored} not sent. Make room (or copy the folder where there is some) and run "
        f"ctxprobe run --resume FOLDER"
    )
    return RunResult(store.dir, manifest, progress, ExitCode.WRITE_FAILED, msg)


def ending(
    store: RunStore,
    manifest: RunManifest,
    progress: Progress,
    outputs: OutputOptions,
    undecided: Undecided,
    lost_detail: str | None,
    latest: list[SampleRecord],
) -> RunResult:
    """How the run ended, in one line and an exit code (`undecided`: a paired run's code for undecided rows;
    `latest`: the latest record of each sample, outlines). A run that finished with its cache path found at fault
    exits `ENGINE_FAULT`, whatever its samples say: their verdicts are suspect."""
    result = _ending(store, manifest, progress, outputs, undecided, lost_detail, latest)
    control = manifest.cache_check
    if control is not None and control.fault and manifest.status == "finished":
        result.exit_code = ExitCode.ENGINE_FAULT
        result.message = f"{control.line()}; {result.message}"
    return result


def _ending(
    store: RunStore,
    manifest: RunManifest,
    progress: Progress,
    outputs: OutputOptions,
    undecided: Undecided,
    lost_detail: str | None,
    latest: list[SampleRecord],
) -> RunResult:
    planned = manifest.samples_planned or 0
    done, errored = manifest.samples_done or 0, manifest.samples_errored or 0
    resume = f"ctxprobe run --resume {store.dir}"
    counts = _left_counts(planned - done - errored, progress)
    off = (
        f"; {manifest.samples_count_off} samples served at another length than planned (see the table)"
        if manifest.samples_count_off
        else ""
    )
    if manifest.status == "endpoint_lost":
        msg = (
            f"the endpoint stopped serving ({lost_detail}); {done} samples done, {errored} errored, {counts}. "
            f"When it is back: {resume}" + (" --endpoint URL if it moved" if manifest.options.get("endpoints") else "")
        )
        return RunResult(store.dir, manifest, progress, ExitCode.ENDPOINT_LOST, msg + off)
    if manifest.status == "interrupted":
        where = f"; continue with: {resume}" if store.dir.exists() else " before anything was sent"
        msg = f"interrupted: {done} samples done, {errored} errored, {counts}{where}"
        return RunResult(store.dir, manifest, progress, ExitCode.INTERRUPTED, msg + off)
    gate = manifest.paired_gate
    if gate is not None:
        code = gate_exit_code(gate["verdict"], undecided)
        used = sum(e["n"] for e in gate["rows"] if e["primary"])
        held = sum(e["baseline_samples"] for e in gate["rows"] if e["primary"])
        msg = f"paired gate against {gate['baseline']}: {gate['verdict']} ({used} pairs of {held} the baseline holds; {errored} errored)"
        return RunResult(store.dir, manifest, progress, code, msg + off)
    if errored and not outputs.allow_errors:
        capped = sum(1 for r in latest if r.error in CAPPED)
        cut = sum(1 for r in latest if r.error is ErrorKind.truncated)
        timed_out = [r for r in latest if r.error is ErrorKind.timeout]
        advice = []
        if errored > capped:
            again = f"`{resume}` sends {'them' if not capped else 'the others'} again"
            if timed_out:
                again = (
                    f"{len(timed_out)} timed out: {resume} {_deadline_flag(manifest.options, timed_out)} sends "
                    "them again with a longer deadline"
                )
            if cut:
                again += f" ({cut} truncated at the answer budget: resume with a larger --answer-tokens)"
            advice.append(again)
        if capped:
            advice.append(_capped_advice(capped, manifest, resume))
        msg = f"{errored} samples ended in errors (see samples.jsonl; --allow-errors accepts them); {'; '.join(advice)}"
        return RunResult(store.dir, manifest, progress, ExitCode.SAMPLE_ERRORS, msg + off)
    return RunResult(store.dir, manifest, progress, ExitCode.OK, f"{done} samples scored, {errored} errored" + off)


def _capped_advice(capped: int, manifest: RunManifest, resume: str) -> str:
    """The samples over the server's context: a resume against this server keeps them (it would reject them
    again: `resume.check_resumable`); only a server that holds more serves them."""
    where = " --endpoint URL" if manifest.options.get("endpoints") else ""
    return (
        f"{capped} did not fit in the server's context: `{resume}` against this server keeps them as they "
        f"are, never sends them again; a server with a longer context serves them ({resume}{where})"
    )


def _deadline_flag(options: dict[str, Any], timed_out: list[SampleRecord]) -> str:
    """The flag, with a value twice as long, that lengthens the timed-out samples' deadline: the per-1K share
    where the longest prompt's share of the deadline is the larger (runners/endpoint_config.py)."""
    base = float(options.get("timeout") or DEFAULT_TIMEOUT_S)
    given_per_1k = options.get("timeout_per_1k")
    per_1k = float(given_per_1k if given_per_1k is not None else 2.0)
    longest = max(r.sample.planned_tokens for r in timed_out)
    if per_1k * longest / 1000.0 >= base:
        return f"--timeout-per-1k {2 * per_1k:g}"
    return f"--timeout {2 * base:g}"


def _left_counts(left: int, progress: Progress) -> str:
    """The samples without a record: those sent whose answer never came (sent again on resume), the rest."""
    out = min(progress.in_flight, left)
    return f"{out} in flight (sent, no answer kept), {left - out} not sent" if out else f"{left} not sent"
