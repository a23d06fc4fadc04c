"""A comparison row as terminal/markdown cells: what compare's tables and a run's template sensitivity
both print, so the two read alike."""

from __future__ import annotations

import math

from ctxprobe.evals.log.compare import CompareRow
from ctxprobe.tasks.lengths import format_length

COLUMNS = ["length", "depth", "n", "base", "cand", "diff", "95% CI", "p", "p_holm", "partial diff [95% CI]", ""]


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}%"


def signed(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:+.0f}"


def row_cells(row: CompareRow) -> list[str]:
    verdict = ""
    if row.significant:
        verdict = "DROP" if row.diff < 0 else "GAIN"
    return [
        format_length(row.context_tokens), "all" if row.depth is None else f"{row.depth:g}%", str(row.n),
        _pct(row.base_accuracy), _pct(row.cand_accuracy), signed(row.diff),
        f"[{signed(row.diff_lo)}, {signed(row.diff_hi)}]", f"{row.p_value:.3g}",
        "" if row.p_holm is None else f"{row.p_holm:.3g}",
        f"{signed(row.partial_diff)} [{signed(row.partial_lo)}, {signed(row.partial_hi)}]", verdict,
    ]


def aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
