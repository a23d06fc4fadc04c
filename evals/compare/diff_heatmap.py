"""Diff heatmaps: one PNG per candidate and family, one panel per variant and haystack, needle depth down and
context length across, coloured by candidate minus baseline accuracy on a diverging scale fixed at -1..+1
(so two comparisons read alike by eye). Each cell carries both accuracies and the number of pairs; a cell
whose exact McNemar p-value (unadjusted) is below alpha gets a heavy border and a star. Drawn like the run
heatmaps (`evals.report.heatmap`): a bare Figure, no pyplot state."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import CompareResult, CompareRow
from ctxprobe.evals.records.safe_write import save_figure
from ctxprobe.tasks.lengths import format_length

DIFF_CMAP = matplotlib.colormaps["RdBu"].with_extremes(bad="#d9d9d9")


def _panel(ax: Axes, cells: list[CompareRow], alpha: float) -> AxesImage:
    depths = sorted({float(c.depth or 0.0) for c in cells})
    contexts = sorted({c.context_tokens for c in cells})
    diff = np.full((len(depths), len(contexts)), np.nan)
    for cell in cells:
        diff[depths.index(float(cell.depth or 0.0)), contexts.index(cell.context_tokens)] = cell.diff
    image = ax.imshow(np.ma.masked_invalid(diff), cmap=DIFF_CMAP, vmin=-1.0, vmax=1.0, aspect="auto")
    for cell in cells:
        i, j = depths.index(float(cell.depth or 0.0)), contexts.index(cell.context_tokens)
        marked = cell.p_value < alpha
        text = f"{signed(cell.diff, 2, 1.0)}{' *' if marked else ''}\n{cell.base_accuracy:.2f} -> {cell.cand_accuracy:.2f}\nn={cell.n}"
        colour = "white" if abs(cell.diff) > 0.6 else "black"
        ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour, linespacing=1.1)
        if marked:
            ax.add_patch(Rectangle((j - 0.48, i - 0.48), 0.96, 0.96, fill=False, edgecolor="black", linewidth=2.2))
    label_grid(ax, depths, contexts, f"{cells[0].variant}  [{cells[0].haystack}]")
    return image


def label_grid(ax: Axes, depths: list[float], contexts: list[int], title: str) -> None:
    """A depth x length panel's ticks, axis labels and title (the diff and KL heatmaps alike)."""
    ax.set_xticks(range(len(contexts)), [format_length(c) for c in contexts])
    ax.set_yticks(range(len(depths)), [f"{d:g}%" for d in depths])
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("needle depth (% of haystack)")
    ax.set_title(title, fontsize=9)


def stacked_axes(shapes: list[tuple[int, int]], width: float = 1.45, margin: float = 2.6) -> tuple[Figure, list[Axes]]:
    """A figure of panels stacked one above the other, each (depths, lengths) in `shapes` sized to fit."""
    cols = max(lengths for _, lengths in shapes)
    heights = [0.62 * depths + 1.4 for depths, _ in shapes]
    fig = Figure(figsize=(max(6.0, width * cols + margin), sum(heights) + 0.8), layout="constrained")
    return fig, list(fig.subplots(len(shapes), 1, squeeze=False, height_ratios=heights)[:, 0])


def plot_family(result: CompareResult, candidate: str, family: str, path: Path) -> Path:
    """One family's diff panels for one candidate, stacked, into a PNG at `path`."""
    panels: dict[tuple[str, str], list[CompareRow]] = {}
    for row in result.rows:
        if row.level == "cell" and row.candidate == candidate and row.family == family:
            panels.setdefault((row.variant, row.haystack), []).append(row)
    grids = list(panels.values())
    fig, axes = stacked_axes([(len({c.depth for c in g}), len({c.context_tokens for c in g})) for g in grids])
    images = [_panel(ax, grid, result.alpha) for ax, grid in zip(axes, grids)]
    fig.colorbar(images[0], ax=axes, label=f"accuracy: {candidate} - {result.baseline.label}", shrink=0.8)
    fig.suptitle(
        f"{family}: {candidate} - {result.baseline.label}\n"
        f"cell: diff, baseline -> candidate accuracy, pairs; * boxed: McNemar p < {result.alpha} (unadjusted)",
        fontsize=9,
    )
    return save_figure(fig, path, dpi=110)


def write_diff_heatmaps(result: CompareResult, out_dir: Path) -> list[Path]:
    """`diff_heatmap_<candidate>_<family>.png` for each candidate and family; returns the paths written."""
    paths = []
    for cand in result.candidates:
        for family in sorted({r.family for r in result.rows if r.candidate == cand.label and r.level == "cell"}):
            name = re.sub(r"[^\w.-]+", "_", f"diff_heatmap_{cand.label}_{family}")
            paths.append(plot_family(result, cand.label, family, out_dir / f"{name}.png"))
    return paths
