"""Accuracy heatmaps: one PNG per task family, one panel per variant, depth down, context length across.

Colour is fixed to 0-1 (red to green) so that runs compare by eye; each cell carries its accuracy, n and
Clopper-Pearson interval; cells with no scored sample are grey and hatched; errored samples are noted, never
counted. Drawn on a bare `Figure` (Agg canvas), so no pyplot state or display is involved."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.safe_write import make_folder, save_figure
from ctxprobe.evals.report.table import CELL, CONDITION, ERROR_COLUMNS, aggregate, record_frame
from ctxprobe.evals.compare.stats import Z95
from ctxprobe.tasks.lengths import format_length

CMAP = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#d9d9d9")


@dataclass(frozen=True)
class HeatmapGrid:
    """One panel: matrices indexed [depth row, context column]; accuracy is NaN where n == 0."""

    family: str
    variant: str
    haystack: str
    depths: list[float]
    contexts: list[int]
    accuracy: np.ndarray
    n: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    errors: np.ndarray
    error_kinds: dict[str, int]


def heatmap_grids(records: Iterable[SampleRecord], z: float = Z95) -> dict[str, list[HeatmapGrid]]:
    """Panels by family, one per (variant, haystack), in sorted order."""
    cells = aggregate(record_frame(records), CELL, z)
    out: dict[str, list[HeatmapGrid]] = {}
    for (family, variant, haystack), block in cells.groupby(CONDITION, sort=True):
        depths = sorted(float(d) for d in block["depth"].unique())
        contexts = sorted(int(c) for c in block["context_tokens"].unique())
        shape = (len(depths), len(contexts))
        acc, lo, hi = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
        n, errors = np.zeros(shape, dtype=int), np.zeros(shape, dtype=int)
        for row in block.itertuples(index=False):
            i, j = depths.index(float(row.depth)), contexts.index(int(row.context_tokens))
            n[i, j], errors[i, j] = row.n, row.errors
            if row.n:
                acc[i, j], lo[i, j], hi[i, j] = row.accuracy, row.ci_lo, row.ci_hi
        kinds = {col[4:]: int(block[col].sum()) for col in ERROR_COLUMNS if block[col].sum()}
        out.setdefault(str(family), []).append(
            HeatmapGrid(str(family), str(variant), str(haystack), depths, contexts, acc, n, lo, hi, errors, kinds))
    return out


def _text_colour(value: float) -> str:
    r, g, b, _ = CMAP(value)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _cell_label(grid: HeatmapGrid, i: int, j: int) -> str:
    parts = []
    if grid.n[i, j]:
        parts += [f"{grid.accuracy[i, j]:.2f}", f"n={grid.n[i, j]}", f"[{grid.lo[i, j]:.2f}, {grid.hi[i, j]:.2f}]"]
    else:
        parts.append("no data")
    if grid.errors[i, j]:
        parts.append(f"+{grid.errors[i, j]} err")
    return "\n".join(parts)


def _draw_panel(ax: Axes, grid: HeatmapGrid, fontsize: float) -> AxesImage:
    image = ax.imshow(np.ma.masked_invalid(grid.accuracy), cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto")
    rows, cols = grid.accuracy.shape
    for i in range(rows):
        for j in range(cols):
            empty = grid.n[i, j] == 0
            if empty:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#9a9a9a",
                                       linewidth=0))
            colour = "#444444" if empty else _text_colour(float(grid.accuracy[i, j]))
            ax.text(j, i, _cell_label(grid, i, j), ha="center", va="center", fontsize=fontsize, color=colour,
                    linespacing=1.1)
    ax.set_xticks(range(cols), [format_length(c) for c in grid.contexts])
    ax.set_yticks(range(rows), [f"{d:g}%" for d in grid.depths])
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("needle depth (% of haystack)")
    title = f"{grid.variant}  [{grid.haystack}]"
    if grid.error_kinds:
        title += "\nerrors, not counted: " + ", ".join(f"{v} {k}" for k, v in grid.error_kinds.items())
    ax.set_title(title, fontsize=9)
    return image


def plot_family(grids: list[HeatmapGrid], title: str, path: Path) -> Path:
    """Draw one family's panels, stacked, into a PNG at `path`."""
    cols = max(len(g.contexts) for g in grids)
    heights = [0.62 * len(g.depths) + 1.4 for g in grids]
    fig = Figure(figsize=(max(6.0, 1.45 * cols + 2.6), sum(heights) + 0.6), layout="constrained")
    axes = fig.subplots(len(grids), 1, squeeze=False, height_ratios=heights)[:, 0]
    fontsize = 7.0 if max(len(g.depths) for g in grids) <= 8 and cols <= 6 else 6.0
    images = [_draw_panel(ax, grid, fontsize) for ax, grid in zip(axes, grids)]
    fig.colorbar(images[0], ax=list(axes), label="accuracy", shrink=0.8)
    fig.suptitle(f"{title} - {grids[0].family}" if title else grids[0].family)
    return save_figure(fig, path, dpi=110)


def write_heatmaps(records: Iterable[SampleRecord], out_dir: Path, title: str, z: float = Z95) -> list[Path]:
    """One `heatmap_<family>.png` per family in `out_dir`; returns the paths written."""
    out_dir = Path(out_dir)
    make_folder(out_dir)
    paths = []
    for family, grids in heatmap_grids(records, z).items():
        safe = re.sub(r"[^\w.-]+", "_", family)
        paths.append(plot_family(grids, title, out_dir / f"heatmap_{safe}.png"))
    return paths
