"""KL at depth as heatmaps: one PNG per candidate and family, one panel per variant and haystack, needle
depth down and context length across, coloured by mean KL on the fixed log scale of
`evals.report.kl_scale` (so two comparisons read alike by eye); each cell carries its KL with its
interval, top-1 agreement and pairs.
Drawn like the diff heatmaps (`evals.compare.diff_heatmap`): a bare Figure, no pyplot state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.image import AxesImage

from ctxprobe.evals.compare.diff_heatmap import label_grid, stacked_axes
from ctxprobe.evals.compare.kl_scale import KL_CMAP, KL_RANGE, kl_norm, kl_position
from ctxprobe.evals.compare.paired.kl_text import heatmap_name, kl_number, percent
from ctxprobe.evals.records.compare import CompareResult
from ctxprobe.evals.records.kl import CandidateKL, KLRow
from ctxprobe.evals.records.safe_write import save_figure


def _panel(ax: Axes, cells: list[KLRow]) -> AxesImage:
    depths = sorted({float(c.depth or 0.0) for c in cells})
    contexts = sorted({c.context_tokens for c in cells})
    grid = np.full((len(depths), len(contexts)), np.nan)
    for cell in cells:
        grid[depths.index(float(cell.depth or 0.0)), contexts.index(cell.context_tokens)] = max(cell.kl, KL_RANGE[0])
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=KL_CMAP, norm=kl_norm(), aspect="auto")
    for cell in cells:
        i, j = depths.index(float(cell.depth or 0.0)), contexts.index(cell.context_tokens)
        text = (
            f"{kl_number(cell.kl)}\n[{kl_number(cell.kl_lo)}, {kl_number(cell.kl_hi)}]\n"
            f"top-1 {percent(cell.top1)}  n={cell.n}"
        )
        colour = "white" if kl_position(cell.kl) > 0.7 else "black"
        ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour, linespacing=1.1)
    label_grid(ax, depths, contexts, f"{cells[0].variant}  [{cells[0].haystack}]")
    return image


def plot_family(cand: CandidateKL, baseline: str, family: str, path: Path) -> Path:
    """One family's KL panels for one candidate, stacked, into a PNG at `path`."""
    panels: dict[tuple[str, str], list[KLRow]] = {}
    for row in cand.rows:
        if row.level == "cell" and row.family == family:
            panels.setdefault((row.variant, row.haystack), []).append(row)
    grids = list(panels.values())
    fig, axes = stacked_axes(
        [(len({c.depth for c in g}), len({c.context_tokens for c in g})) for g in grids], width=1.6, margin=2.8
    )
    images = [_panel(ax, grid) for ax, grid in zip(axes, grids)]
    fig.colorbar(images[0], ax=axes, label=f"mean KL({baseline} || {cand.candidate}), nats", shrink=0.8)
    fig.suptitle(
        f"{family}: KL at the answer positions, {cand.candidate} against {baseline}\n"
        "cell: mean KL [95% CI], top-1 agreement, pairs",
        fontsize=9,
    )
    return save_figure(fig, path, dpi=110)


def write_kl_heatmaps(result: CompareResult, out_dir: Path) -> list[Path]:
    """`kl_heatmap_<candidate>_<family>.png` for each candidate and family with KL cells; the paths written."""
    paths: list[Path] = []
    for cand in result.kl.candidates if result.kl else []:
        for family in sorted({r.family for r in cand.rows if r.level == "cell"}):
            paths.append(
                plot_family(cand, result.baseline.label, family, out_dir / heatmap_name(cand.candidate, family))
            )
    return paths
