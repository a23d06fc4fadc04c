"""The gate's verdicts where CI systems show them: a JUnit XML file (one test case per pooled family row
and per family x length row: passed, failed, or skipped when undecided, with the difference, interval and
n in the message) and a short markdown table, appended to `$GITHUB_STEP_SUMMARY` when it is set. The
fixed gate (`compare`) and the paired sequential run (`run --against`) both hand their rows over as
`GateCase`s."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.compare.sequential.gate import PASS_MEANING, overall_verdict
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.safe_write import replace_file

FIXED_INTERVAL = "95% interval"  # the fixed gate's bounds (two-sided)
SEQUENTIAL_INTERVAL = "anytime-valid bounds (each one-sided 95%)"  # the sequential gate's bounds


@dataclass(frozen=True)
class GateCase:
    """One row the gate tested: `where` names it (`niah variant=single [prose] 2K`), `primary` for a
    family pooled over its lengths."""

    candidate: str
    where: str
    primary: bool
    verdict: str  # FAIL, PASS or UNDECIDED
    diff: float
    diff_lo: float
    diff_hi: float
    n: int
    detail: str = ""  # e.g. the accuracies and adjusted p (fixed), the pairs used of the baseline's (sequential)
    interval: str = FIXED_INTERVAL  # what the bounds are: the sequential gate's are each one-sided at 95 %
    metric: str = "correct"  # what the verdict and the difference are of: correct, p_answer or kl
    other: str = ""  # the other metric on the same row, side by side (empty where the rows have one metric)

    @property
    def name(self) -> str:
        return self.where + (" (primary)" if self.primary else "")

    def message(self) -> str:
        text = f"{self.verdict} on {metric_text(self.metric, self.diff, self.diff_lo, self.diff_hi, self.n, self.interval)}"
        return text + (f", {self.detail}" if self.detail else "") + (f"; beside it {self.other}" if self.other else "")


def metric_text(metric: str, diff: float, lo: float, hi: float, n: int, interval: str) -> str:
    """`correct: diff -3.0 points, 95% interval [-6.1, +0.2], n 400 pairs` (p_answer's points are
    probability points; kl's a mean in nats: `kl: mean 0.0435 nats, ...`)."""
    if metric == "kl":
        return f"kl: mean {diff:.4f} nats, {interval} [{lo:.4f}, {hi:.4f}], n {n} pairs"
    return f"{metric}: diff {signed(diff, 1)} points, {interval} [{signed(lo, 1)}, {signed(hi, 1)}], n {n} pairs"


def gate_outcome(cases: list[GateCase]) -> str:
    """FAIL when a row fails, PASS when every primary (pooled) row passes, else UNDECIDED (`overall_verdict`)."""
    return overall_verdict([c.primary for c in cases], [c.verdict for c in cases])


def junit_xml(cases: list[GateCase], title: str, engine_faults: Sequence[str] = ()) -> str:
    """JUnit XML: one testsuite per candidate, one testcase per gate row; a run whose cache path changes
    answers (`engine_faults`, one line a run) is a failed test case of its own, typed `engine_fault`."""
    root = ET.Element("testsuites", name=title)
    if engine_faults:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{title}: engine",
            tests=str(len(engine_faults)),
            failures=str(len(engine_faults)),
            errors="0",
            skipped="0",
            time="0",
        )
        for fault in engine_faults:
            element = ET.SubElement(suite, "testcase", classname="ctxprobe.engine", name="cache path", time="0")
            ET.SubElement(element, "failure", message=fault, type="engine_fault").text = fault
    for candidate in dict.fromkeys(c.candidate for c in cases):
        mine = [c for c in cases if c.candidate == candidate]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{title}: {candidate}",
            tests=str(len(mine)),
            failures=str(sum(c.verdict == "FAIL" for c in mine)),
            errors="0",
            skipped=str(sum(c.verdict == "UNDECIDED" for c in mine)),
            time="0",
        )
        for case in mine:
            element = ET.SubElement(suite, "testcase", classname=f"ctxprobe.gate.{candidate}", name=case.name, time="0")
            if case.verdict == "FAIL":
                ET.SubElement(element, "failure", message=case.message(), type="drop").text = case.message()
            elif case.verdict == "UNDECIDED":
                ET.SubElement(element, "skipped", message=case.message())
            else:
                ET.SubElement(element, "system-out").text = case.message()
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def summary_markdown(cases: list[GateCase], title: str, engine_faults: Sequence[str] = ()) -> str:
    """A short markdown table: the gate's outcome, then one line per row; engine faults first."""
    kinds = sorted({c.interval for c in cases}) or [FIXED_INTERVAL]
    header = kinds[0] if len(kinds) == 1 else "interval"
    metric = cases[0].metric if cases else "correct"
    beside = any(c.other for c in cases)
    lines = [
        f"### {title}: {gate_outcome(cases)} (on {metric})",
        "",
        f"| candidate | row | verdict | diff | {header} | n |" + (" beside it |" if beside else ""),
        "|---|---|---|---:|---:|---:|" + ("---|" if beside else ""),
    ]
    for c in cases:
        lines.append(
            f"| {c.candidate} | {c.name} | {c.verdict} | {signed(c.diff, 1)} | "
            f"[{signed(c.diff_lo, 1)}, {signed(c.diff_hi, 1)}] | {c.n} |" + (f" {c.other} |" if beside else "")
        )
    faults = [f"**ENGINE FAULT: {fault}**" for fault in engine_faults]
    return "\n".join([*faults, *([""] if faults else []), *lines, "", PASS_MEANING]) + "\n"


def write_ci_outputs(
    cases: list[GateCase], title: str, junit: str | None, summary_md: str | None, engine_faults: Sequence[str] = ()
) -> list[Path]:
    """Write the files asked for; the markdown is also appended to `$GITHUB_STEP_SUMMARY` when set."""
    written: list[Path] = []
    if junit:
        written.append(replace_file(junit, junit_xml(cases, title, engine_faults)))
    text = summary_markdown(cases, title, engine_faults)
    if summary_md:
        written.append(replace_file(summary_md, text))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and (junit or summary_md):
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
        written.append(Path(step_summary))
    return written
