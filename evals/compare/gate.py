"""What the `--fail-if-drop` gate refuses to judge. A gate that passes a candidate still running (half its
samples), a run compared with itself, or two runs of different suites says "no drop" about something it
never measured; a nightly job must see that as its own failure, not as a pass. Without the gate the same
facts are warnings and the comparison is still shown."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.records.load import Run
from ctxprobe.tasks.errors import ExitError
from ctxprobe.tasks.exit_codes import ExitCode

GATE_REFUSED_EXIT = ExitCode.GATE_REFUSED


class GateRefused(ExitError):
    """The gate was asked to judge runs it cannot judge (one line: which and why)."""

    exit_code = GATE_REFUSED_EXIT


def gate_problems(base: Run, cands: list[Run], labels: list[str]) -> list[str]:
    """Why these runs cannot be gated, one phrase each (empty when they can)."""
    problems = []
    for label, run in zip(labels, [base, *cands]):
        if run.manifest.status != "finished":
            done = len(run.records)
            problems.append(
                f"{label} is not finished (status {run.manifest.status}, {done} of "
                f"{run.manifest.samples_planned or '?'} samples)"
            )
    for label, cand in zip(labels[1:], cands):
        if cand.dir.resolve() == base.dir.resolve():
            problems.append(f"{label} is the baseline itself ({base.dir})")
            continue
        diff = suite_difference(_suite_fields(base), _suite_fields(cand))
        if diff:
            problems.append(f"{label} ran another suite than the baseline ({diff})")
        rules, base_rules = scorer_versions(cand), scorer_versions(base)
        if rules and base_rules and rules != base_rules:
            problems.append(
                f"the scoring rule changed: {label} was scored by scorer v{_versions(rules)}, the "
                f"baseline by v{_versions(base_rules)}, so a difference may be the rule's, not the build's"
            )
    return problems


def scorer_versions(run: Run) -> set[int]:
    """The scoring rules that scored a run's records."""
    return {r.score.scorer_version for r in run.records if r.score is not None}


def _versions(versions: set[int]) -> str:
    return ",".join(str(v) for v in sorted(versions))


def _suite_fields(run: Run) -> dict[str, Any]:
    """What a suite asks of the model: its description and its cache-path control aside (neither changes a
    sample; a run of the suite from before it stated `cache_check` gates against one from after)."""
    return run.manifest.suite.model_dump(mode="json", exclude={"description", "cache_check"})


def suite_difference(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            a, b = repr(old.get(key)), repr(new.get(key))
            return f"{key}: {a[:60]} vs {b[:60]}"
    return None
