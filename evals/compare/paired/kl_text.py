"""KL at depth as text: compare's table and compare.md (per candidate and family/variant/haystack, the
family pooled, each length, then each length x depth cell, with the pairs left out and why), one line
saying why where no pair can be compared, and the cells the HTML report shows, so all read alike.
The heatmaps are `evals.compare.kl_heatmap`."""

from __future__ import annotations

import math
import re

from ctxprobe.evals.compare.paired.kl_gate import CAP_TIMES
from ctxprobe.evals.compare.paired.text import aligned
from ctxprobe.evals.compare.paired.verdict import compare_verdict, undecided_text
from ctxprobe.evals.records.compare import CompareResult
from ctxprobe.evals.records.kl import CandidateKL, KLComparison, KLRow, find_row
from ctxprobe.tasks.lengths import format_length

COLUMNS = ["length", "depth", "n", "positions", "KL", "95% CI", "top-1", "95% CI", "base rest", "k"]
GATE_COLUMNS = ["gate", "bounds (capped)"]  # `compare --metric kl`: the KL gate's verdict, each bound one-sided


def heatmap_name(candidate: str, family: str) -> str:
    """The file name of one candidate's KL heatmap of one family (written by compare, shown by the report)."""
    return re.sub(r"[^\w.-]+", "_", f"kl_heatmap_{candidate}_{family}") + ".png"


def kl_number(x: float) -> str:
    """Three significant digits (q8_0 at short context is ~1e-4 nats, a lost answer several nats); a
    rounding residue below 1e-9 (either sign) reads 0."""
    if math.isnan(x):
        return "-"
    return "0" if abs(x) < 1e-9 else f"{x:.3g}"


def percent(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}%"


def row_cells(row: KLRow) -> list[str]:
    return [
        "pooled" if row.level == "family" else format_length(row.context_tokens),
        "all" if row.depth is None else f"{row.depth:g}%",
        str(row.n),
        str(row.positions),
        kl_number(row.kl),
        f"[{kl_number(row.kl_lo)}, {kl_number(row.kl_hi)}]",
        percent(row.top1),
        f"[{percent(row.top1_lo)}, {percent(row.top1_hi)}]",
        f"{100 * row.base_rest:.1f}%",
        str(row.top_k),
    ]


def gate_cells(row: KLRow) -> list[str]:
    """The KL gate's columns of a row: its verdict and the capped mean's bounds (blank on cells)."""
    if row.verdict is None or row.gate_lo is None or row.gate_hi is None:
        return ["", ""]
    return [row.verdict, f"[{kl_number(row.gate_lo)}, {kl_number(row.gate_hi)}]"]


def gate_line(result: CompareResult) -> list[str]:
    """The KL gate's outcome (`compare --metric kl`): FAIL naming the rows, else pass; [] without the gate."""
    kl = result.kl
    if result.metric != "kl" or kl is None or kl.margin is None:
        return []
    named = []
    for r in result.failed:
        row = find_row(kl, r.candidate, r.level, r.family, r.variant, r.haystack, r.context_tokens)
        named.append(
            f"{r.candidate} {r.where()}"
            + (f" KL {kl_number(row.kl)} nats (at least {kl_number(row.gate_lo or 0.0)})" if row is not None else "")
        )
    verdict = compare_verdict(result)
    if verdict != "FAIL":
        named = [undecided_text(result)] if verdict == "UNDECIDED" else []
    return [
        f"gate --metric kl --kl-margin {kl.margin:g}: {verdict}" + (f": {'; '.join(named)}" if named else ""),
        f"KL gate: {kl.gate_method}. FAIL: the row's mean KL is above the margin; PASS: its mean, each pair's "
        f"counted up to {CAP_TIMES:g} margins, is below it (the correctness gate catches a build that loses a few "
        "answers outright).",
    ]


def left_out_text(cand: CandidateKL) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in cand.left_out.items())


def not_computed_line(kl: KLComparison | None) -> str:
    """The one line said where no candidate has a pair to compare position by position."""
    reasons = "; ".join(f"{c.candidate}: {left_out_text(c)}" for c in kl.candidates if c.left_out) if kl else ""
    return (
        "KL at depth: not computed: no pair has answer logprobs on both sides"
        + (f" ({reasons})" if reasons else "")
        + "; run both with --logprobs on an engine that gives them"
    )


def blocks(cand: CandidateKL) -> dict[tuple[str, str, str], list[KLRow]]:
    """The candidate's rows by family, variant and haystack, pooled rows first, then lengths, then cells."""
    out: dict[tuple[str, str, str], list[KLRow]] = {}
    for row in cand.rows:
        out.setdefault((row.family, row.variant, row.haystack), []).append(row)
    return out


def kl_lines(result: CompareResult, markdown: bool = False) -> list[str]:
    """The KL tables of every candidate (or the one line saying why there are none)."""
    kl = result.kl
    if kl is None or not kl.computed():
        return [not_computed_line(kl)]
    out = ["## KL at depth" if markdown else "KL at depth", ""]
    for cand in kl.candidates:
        left = f"; left out: {left_out_text(cand)}" if cand.left_out else ""
        out.append(
            f"baseline {result.baseline.label}  vs  candidate {cand.candidate}: {cand.pairs} pairs compared "
            f"at their answer positions{left}"
        )
        gated = kl.margin is not None
        columns = COLUMNS + GATE_COLUMNS if gated else COLUMNS
        for (family, variant, haystack), rows in blocks(cand).items():
            cells = [row_cells(r) + (gate_cells(r) if gated else []) for r in rows]
            if markdown:
                out += [
                    "",
                    f"### {family} — {variant} — {haystack}",
                    "",
                    "| " + " | ".join(columns) + " |",
                    "|" + "|".join("---:" for _ in columns) + "|",
                    *("| " + " | ".join(c) + " |" for c in cells),
                ]
            else:
                out += ["", f"{family}  {variant}  [{haystack}]", *aligned([columns, *cells])]
        out.append("")
    out.append(
        f"KL: {kl.method}. Intervals: {kl.interval_method}. base rest: the baseline's probability outside "
        "the tokens it lists (divergence there is not seen); k: the shortest top-k list."
    )
    return out
