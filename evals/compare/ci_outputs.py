"""The gate's verdicts where CI systems show them: a JUnit XML file (one test case per pooled family row
and per family x length row: passed, failed, or skipped when undecided, with the difference, interval and
n in the message) and a short markdown table, appended to `$GITHUB_STEP_SUMMARY` when it is set."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.compare.api import CompareResult
from ctxprobe.evals.compare.rows import CompareRow
from ctxprobe.evals.compare.verdict import row_verdict


@dataclass(frozen=True)
class GateCase:
    candidate: str
    row: CompareRow
    verdict: str  # FAIL, PASS or UNDECIDED
    stop: str | None = None  # why a sequential row stopped

    @property
    def name(self) -> str:
        return self.row.where() + (" (primary)" if self.row.level == "family" else "")

    def message(self) -> str:
        r = self.row
        text = (f"{self.verdict}: diff {100 * r.diff:+.1f} points, 95% interval [{100 * r.diff_lo:+.1f}, "
                f"{100 * r.diff_hi:+.1f}], n {r.n} pairs, baseline {100 * r.base_accuracy:.0f}% vs candidate "
                f"{100 * r.cand_accuracy:.0f}%, p_holm {r.p_holm if r.p_holm is not None else float('nan'):.3g}")
        return text + (f", stopped: {self.stop}" if self.stop else "")


def gate_cases(result: CompareResult, stops: dict[tuple[str, str], str] | None = None) -> list[GateCase]:
    """Every row the gate tests, with its verdict (`stops`: a sequential run's reason per (candidate, where))."""
    margin = result.fail_if_drop or 0.0
    failed = {(r.candidate, r.where()) for r in result.failed}
    return [GateCase(r.candidate, r, row_verdict(r, (r.candidate, r.where()) in failed, margin),
                     (stops or {}).get((r.candidate, r.where())))
            for r in result.gate_rows()]


def gate_outcome(cases: list[GateCase]) -> str:
    """FAIL when a row fails, PASS when every primary (pooled) row passes, else UNDECIDED."""
    if any(c.verdict == "FAIL" for c in cases):
        return "FAIL"
    primary = [c for c in cases if c.row.level == "family"] or cases
    return "PASS" if primary and all(c.verdict == "PASS" for c in primary) else "UNDECIDED"


def junit_xml(cases: list[GateCase], title: str) -> str:
    """JUnit XML: one testsuite per candidate, one testcase per gate row."""
    root = ET.Element("testsuites", name=title)
    for candidate in dict.fromkeys(c.candidate for c in cases):
        mine = [c for c in cases if c.candidate == candidate]
        suite = ET.SubElement(root, "testsuite", name=f"{title}: {candidate}", tests=str(len(mine)),
                              failures=str(sum(c.verdict == "FAIL" for c in mine)), errors="0",
                              skipped=str(sum(c.verdict == "UNDECIDED" for c in mine)), time="0")
        for case in mine:
            element = ET.SubElement(suite, "testcase", classname=f"ctxprobe.gate.{candidate}", name=case.name,
                                    time="0")
            if case.verdict == "FAIL":
                ET.SubElement(element, "failure", message=case.message(), type="drop").text = case.message()
            elif case.verdict == "UNDECIDED":
                ET.SubElement(element, "skipped", message=case.message())
            else:
                ET.SubElement(element, "system-out").text = case.message()
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def summary_markdown(cases: list[GateCase], title: str) -> str:
    """A short markdown table: the gate's outcome, then one line per row."""
    lines = [f"### {title}: {gate_outcome(cases)}", "",
             "| candidate | row | verdict | diff | 95% interval | n |", "|---|---|---|---:|---:|---:|"]
    for c in cases:
        r = c.row
        lines.append(f"| {c.candidate} | {c.name} | {c.verdict}{f' ({c.stop})' if c.stop else ''} | "
                     f"{100 * r.diff:+.1f} | [{100 * r.diff_lo:+.1f}, {100 * r.diff_hi:+.1f}] | {r.n} |")
    return "\n".join(lines) + "\n"


def write_ci_outputs(cases: list[GateCase], title: str, junit: str | None, summary_md: str | None) -> list[Path]:
    """Write the files asked for; the markdown is also appended to `$GITHUB_STEP_SUMMARY` when set."""
    written: list[Path] = []
    if junit:
        path = Path(junit)
        path.write_text(junit_xml(cases, title), encoding="utf-8")
        written.append(path)
    text = summary_markdown(cases, title)
    if summary_md:
        path = Path(summary_md)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and (junit or summary_md):
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
        written.append(Path(step_summary))
    return written
