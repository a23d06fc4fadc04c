"""A comparison row as terminal/markdown cells: what compare's tables and a run's template sensitivity
both print, so the two read alike."""

from __future__ import annotations

import math

from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import CompareRow
from ctxprobe.tasks.lengths import format_length

COLUMNS = ["length", "depth", "n", "base", "cand", "diff", "95% CI", "p", "p_holm", "partial diff [95% CI]", ""]
P_ANSWER_COLUMNS = ["p_ans n", "p_ans base", "p_ans cand", "p_ans diff [95% CS]"]
NO_P_ANSWER = "no p_answer"  # a row none of whose pairs has answer probabilities on both sides


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}%"


def row_cells(row: CompareRow) -> list[str]:
    verdict = ""
    if row.significant:
        verdict = "DROP" if row.diff < 0 else "GAIN"
    length = "pooled" if row.level == "family" else format_length(row.context_tokens)
    return [
        length,
        "all" if row.depth is None else f"{row.depth:g}%",
        str(row.n),
        _pct(row.base_accuracy),
        _pct(row.cand_accuracy),
        signed(row.diff),
        f"[{signed(row.diff_lo)}, {signed(row.diff_hi)}]",
        f"{row.p_value:.3g}",
        "" if row.p_holm is None else f"{row.p_holm:.3g}",
        f"{signed(row.partial_diff)} [{signed(row.partial_lo)}, {signed(row.partial_hi)}]",
        verdict,
    ]


def aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def p_answer_cells(row: CompareRow) -> list[str]:
    """The row's answer-probability columns, beside the accuracy ones: pairs that have it (of the row's, where
    some lack it), the mean p_answer of each build, and the paired difference with its interval."""
    pa = row.p_answer
    if pa is None:
        return ["0", "-", "-", NO_P_ANSWER]
    n = str(pa.n) if not pa.missing else f"{pa.n}/{pa.n + pa.missing}"
    return [n, f"{pa.base:.3f}", f"{pa.cand:.3f}", f"{signed(pa.diff)} [{signed(pa.lo)}, {signed(pa.hi)}]"]
