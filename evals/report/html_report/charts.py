"""Colours and small charts for the HTML report. Charts are matplotlib SVGs embedded as `data:` URIs in
`<img>` tags: sharp at any zoom, a few kB each, no network, and an `<img>` can run nothing. Heatmap cells
take the run heatmaps' colour map (`evals.report.heatmap.CMAP`), so the page and the PNGs read alike."""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from pathlib import Path

from matplotlib import rc_context
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from ctxprobe.tasks.lengths import format_length


def accuracy_colour(value: float) -> tuple[str, str]:
    """Background and text colour of a heatmap cell: red (0) to green (1); grey with no data."""
    from ctxprobe.evals.report.heatmap import CMAP

    if math.isnan(value):
        return "#d9d9d9", "#444444"
    r, g, b, _ = CMAP(value)
    return to_hex((r, g, b)), "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "#ffffff"


def diff_colour(value: float) -> tuple[str, str]:
    """Background and text colour of a difference in -1..+1: red for a drop, blue for a gain."""
    import matplotlib

    if math.isnan(value):
        return "#d9d9d9", "#444444"
    r, g, b, _ = matplotlib.colormaps["RdBu"]((value + 1.0) / 2.0)
    return to_hex((r, g, b)), "#ffffff" if abs(value) > 0.6 else "#000000"


def svg_data_uri(fig: Figure) -> str:
    """The figure as an SVG `data:` URI, its text kept as text (smaller than glyph outlines)."""
    buf = io.BytesIO()
    # text kept as <text>; a fixed hash salt makes the same report the same bytes
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "ctxprobe"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def png_data_uri(path: Path) -> str:
    """A PNG file (e.g. a diff heatmap another command wrote) as a `data:` URI."""
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


@dataclass(frozen=True)
class Series:
    """One line of a chart: y (with optional low/high band) against context length."""

    label: str
    lengths: list[int]
    values: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None


def length_chart(
    series: list[Series],
    ylabel: str,
    *,
    threshold: float | None = None,
    bracket: tuple[int, int] | None = None,
    ylim: tuple[float, float] | None = None,
) -> str:
    """Lines against context length (log scale), intervals as error bars, an optional threshold line and
    a shaded bracket (longest passing .. shortest failing length); an SVG data URI."""
    fig = Figure(figsize=(6.4, 3.0), layout="constrained")
    ax = fig.subplots()
    ticks: set[int] = set()
    for s in series:
        ticks.update(s.lengths)
        if s.lo is not None and s.hi is not None:
            err = [
                [max(0.0, v - lo) for v, lo in zip(s.values, s.lo)],
                [max(0.0, hi - v) for v, hi in zip(s.values, s.hi)],
            ]
            ax.errorbar(s.lengths, s.values, yerr=err, marker="o", capsize=3, label=s.label)
        else:
            ax.plot(s.lengths, s.values, marker="o", label=s.label)
    if threshold is not None:
        ax.axhline(threshold, color="#b00020", linestyle="--", linewidth=1, label=f"threshold {threshold:.3g}")
    if bracket is not None:
        ax.axvspan(bracket[0], bracket[1], color="#f4c542", alpha=0.3, label="bracket")
    ax.set_xscale("log")
    if ticks:
        ordered = sorted(ticks)
        if len(ordered) > 10:
            ordered = ordered[:: math.ceil(len(ordered) / 10)]
        ax.set_xticks(ordered, [format_length(t) for t in ordered], fontsize=7)
        ax.minorticks_off()
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)
    if any(s.label for s in series) or threshold is not None:
        ax.legend(fontsize=7)
    return svg_data_uri(fig)
