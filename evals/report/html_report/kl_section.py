"""KL at depth on a compare page: per candidate, the pooled and per-length rows as a table, the length x
depth cells as a heatmap table coloured on the KL PNGs' scale (`evals.report.kl_scale`), the pairs left
out and why, and the PNGs compare drew; or the one line saying why nothing was computed. Read from the
comparison's typed `kl` (None in comparisons written before it: the page says so)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.evals.compare.kl_scale import kl_colour
from ctxprobe.evals.compare.paired.kl_text import (
    COLUMNS,
    GATE_COLUMNS,
    blocks,
    gate_cells,
    heatmap_name,
    kl_number,
    left_out_text,
    not_computed_line,
    percent,
    row_cells,
)
from ctxprobe.evals.records.kl import CandidateKL, KLComparison, KLRow
from ctxprobe.evals.report.html_report.charts import png_data_uri
from ctxprobe.tasks.lengths import format_length


def _cell(row: KLRow | None) -> dict[str, str]:
    if row is None:
        return {"text": "", "sub": "", "background": "#d9d9d9", "colour": "#444", "title": ""}
    background, colour = kl_colour(row.kl)
    return {
        "text": kl_number(row.kl),
        "sub": f"[{kl_number(row.kl_lo)}, {kl_number(row.kl_hi)}] top-1 {percent(row.top1)} n={row.n}",
        "background": background,
        "colour": colour,
        "title": f"{row.positions} positions; top-1 95% CI [{percent(row.top1_lo)}, {percent(row.top1_hi)}]",
    }


def _grid(rows: list[KLRow]) -> dict[str, Any]:
    cells = [r for r in rows if r.level == "cell"]
    depths = sorted({float(c.depth or 0.0) for c in cells})
    lengths = sorted({c.context_tokens for c in cells})
    at = {(float(c.depth or 0.0), c.context_tokens): c for c in cells}
    return {
        "lengths": [format_length(n) for n in lengths],
        "rows": [(f"{d:g}%", [_cell(at.get((d, n))) for n in lengths]) for d in depths],
    }


def _candidate(cand: CandidateKL, folder: Path, gated: bool) -> dict[str, Any]:
    panels = []
    for (family, variant, haystack), rows in blocks(cand).items():
        pooled = [row_cells(r) + (gate_cells(r) if gated else []) for r in rows if r.level != "cell"]
        panels.append({"family": family, "variant": variant, "haystack": haystack, "pooled": pooled, **_grid(rows)})
    names = [
        heatmap_name(cand.candidate, family) for family in sorted({r.family for r in cand.rows if r.level == "cell"})
    ]
    images = [(name, png_data_uri(folder / name)) for name in names if (folder / name).is_file()]
    return {
        "label": cand.candidate,
        "pairs": cand.pairs,
        "left_out": left_out_text(cand),
        "panels": panels,
        "images": images,
    }


def kl_section(kl: KLComparison | None, folder: Path) -> dict[str, Any]:
    """What the compare template's KL section shows."""
    if kl is None:
        return {"line": "KL at depth: this comparison was written before KL at depth was computed", "candidates": []}
    if not kl.computed():
        return {"line": not_computed_line(kl), "candidates": []}
    gated = kl.margin is not None  # `compare --metric kl`: the gate's verdict and bounds on the pooled rows
    return {
        "line": None,
        "columns": COLUMNS + GATE_COLUMNS if gated else COLUMNS,
        "candidates": [_candidate(c, folder, gated) for c in kl.candidates],
        "method": kl.method + (f". Gate: {kl.gate_method}, margin {kl.margin:g} nats" if gated else ""),
        "interval_method": kl.interval_method,
    }
