"""Accuracy heatmaps: one PNG per task family, one panel per variant, depth down, context length across.

Colour is fixed to 0-1 (red to green) so that runs compare by eye; each cell carries its accuracy, n and
Clopper-Pearson interval; cells with no scored sample are grey and hatched; errored samples are noted, never
counted. Drawn on a bare `Figure` (Agg canvas), so no pyplot state or display is involved."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from ctxprobe.evals.compare.stats import Z95
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.safe_write import make_folder, save_figure
from ctxprobe.evals.report.table import CELL, CONDITION, ERROR_COLUMNS, aggregate, record_frame
from ctxprobe.tasks.lengths import format_length

DRAWING = "2"  # raised whenever the drawing changes, so that PNGs drawn the old way are drawn again
STAMP_KEY = "ctxprobe-drawn-from"
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
            HeatmapGrid(str(family), str(variant), str(haystack), depths, contexts, acc, n, lo, hi, errors, kinds)
        )
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
                ax.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#9a9a9a", linewidth=0)
                )
            colour = "#444444" if empty else _text_colour(float(grid.accuracy[i, j]))
            ax.text(
                j,
                i,
                _cell_label(grid, i, j),
                ha="center",
                va="center",
                fontsize=fontsize,
                color=colour,
                linespacing=1.1,
            )
    ax.set_xticks(range(cols), [format_length(c) for c in grid.contexts])
    ax.set_yticks(range(rows), [f"{d:g}%" for d in grid.depths])
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("needle depth (% of haystack)")
    title = f"{grid.variant}  [{grid.haystack}]"
    if grid.error_kinds:
        title += "\nerrors, not counted: " + ", ".join(f"{v} {k}" for k, v in grid.error_kinds.items())
    ax.set_title(title, fontsize=9)
    return image


# The figure's layout in inches, fixed rather than solved (a solver measures every label once more before drawing)
LEFT_IN, RIGHT_IN, TOP_IN, BAR_IN = 1.0, 1.3, 0.4, 0.18  # y labels; colour bar and its label; suptitle; bar width
ROW_IN, TITLE_IN, TITLE_LINE_IN, XLABEL_IN = 0.62, 0.4, 0.16, 0.6  # a depth row; a panel's title, a line more; x labels


def plot_family(grids: list[HeatmapGrid], title: str, path: Path, stamp: str | None = None) -> Path:
    """Draw one family's panels, stacked, into a PNG at `path` (with `stamp` in its header: see `write_heatmaps`)."""
    cols = max(len(g.contexts) for g in grids)
    titles = [TITLE_IN + TITLE_LINE_IN * bool(g.error_kinds) for g in grids]
    heights = [ROW_IN * len(g.depths) + XLABEL_IN + t for g, t in zip(grids, titles)]
    width, height = max(6.0, 1.45 * cols + 2.6), sum(heights) + TOP_IN
    fig = Figure(figsize=(width, height))
    fontsize = 7.0 if max(len(g.depths) for g in grids) <= 8 and cols <= 6 else 6.0
    top, images = height - TOP_IN, []
    for grid, panel, title_in in zip(grids, heights, titles):
        box = (
            LEFT_IN / width,
            (top - panel + XLABEL_IN) / height,
            (width - LEFT_IN - RIGHT_IN) / width,
            (panel - XLABEL_IN - title_in) / height,
        )
        images.append(_draw_panel(fig.add_axes(box), grid, fontsize))
        top -= panel
    bar = fig.add_axes(((width - RIGHT_IN + 0.25) / width, 0.1, BAR_IN / width, 0.8 * (height - TOP_IN) / height))
    fig.colorbar(images[0], cax=bar, label="accuracy")
    fig.suptitle(f"{title} - {grids[0].family}" if title else grids[0].family, y=1 - 0.12 / height, va="top")
    return save_figure(fig, path, dpi=110, metadata={STAMP_KEY: stamp} if stamp else None)


def write_heatmaps(records: Iterable[SampleRecord], out_dir: Path, title: str, z: float = Z95) -> list[Path]:
    """One `heatmap_<family>.png` per family in `out_dir`; returns their paths. A PNG that already shows the same
    panels (its `drawn_from` stamp) is kept as it is: `show` of a finished run draws nothing again."""
    out_dir = Path(out_dir)
    make_folder(out_dir)
    paths = []
    for family, grids in heatmap_grids(records, z).items():
        safe = re.sub(r"[^\w.-]+", "_", family)
        path = out_dir / f"heatmap_{safe}.png"
        stamp = drawn_from(grids, title)
        paths.append(path if _stamp_of(path) == stamp else plot_family(grids, title, path, stamp))
    return paths


def drawn_from(grids: list[HeatmapGrid], title: str) -> str:
    """A digest of everything a family's PNG shows, and of how it is drawn (`DRAWING`)."""
    digest = hashlib.sha256(f"{DRAWING}\0{title}".encode())
    for g in grids:
        shown = (
            g.family,
            g.variant,
            g.haystack,
            g.depths,
            g.contexts,
            g.error_kinds,
            *(a.tolist() for a in (g.accuracy, g.n, g.lo, g.hi, g.errors)),
        )
        digest.update(repr(shown).encode())
    return digest.hexdigest()


def _stamp_of(path: Path) -> str | None:
    """The `drawn_from` stamp of a heatmap PNG written here (its header only is read), None for any other file."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            stamp = image.info.get(STAMP_KEY)
    except (OSError, UnidentifiedImageError):
        return None
    return stamp if isinstance(stamp, str) else None
