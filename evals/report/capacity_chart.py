"""The capacity curve as a figure: accuracy against the number of facts held (log axis), one line per
length with its 95% Clopper-Pearson interval shaded, the threshold dashed, each length's capacity in the legend;
one panel per (family, variant, haystack). The run folder gets it as `capacity.png`, the HTML report as an
inline SVG of the same figure. Drawn on a bare `Figure`, so no pyplot state or display is involved."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from ctxprobe.evals.records.safe_write import save_figure
from ctxprobe.evals.report.capacity import CapacityCurve
from ctxprobe.evals.report.table import CONDITION
from ctxprobe.tasks.lengths import format_length

CAPACITY_PNG = "capacity.png"


def capacity_figure(curve: CapacityCurve, title: str = "") -> Figure | None:
    """The figure, or None when no record holds facts."""
    if curve.empty:
        return None
    threshold = curve.threshold
    panels = list(curve.table.groupby(CONDITION, sort=True))
    fig = Figure(figsize=(7.0, 3.4 * len(panels) + 0.4), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (cond, block) in zip(axes, panels):
        facts = sorted(int(n) for n in block["facts"].unique())
        for length, line in block.groupby("context_tokens", sort=True):
            line = line[line["n"] > 0].sort_values("facts")
            cap = curve.caps[(*cond, int(length))]
            label = f"{format_length(int(length))}: capacity {cap.label()}"
            (drawn,) = ax.plot(line["facts"], line["accuracy"], marker="o", label=label)
            ax.fill_between(
                line["facts"], line["ci_lo"], line["ci_hi"], color=drawn.get_color(), alpha=0.18, linewidth=0
            )
        ax.axhline(threshold, color="#b00020", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(facts, [str(n) for n in facts])
        ax.minorticks_off()
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("facts held at once (N)")
        ax.set_ylabel("accuracy (95% Clopper-Pearson shaded)")
        ax.set_title(f"{cond[0]}  {cond[1]}  [{cond[2]}]", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{title} - recall capacity" if title else "recall capacity")
    return fig


def write_capacity_png(curve: CapacityCurve, out_dir: Path, title: str = "") -> Path | None:
    """`capacity.png` in `out_dir`; None (nothing written) when no record holds facts."""
    fig = capacity_figure(curve, title)
    if fig is None:
        return None
    path = Path(out_dir) / CAPACITY_PNG
    return save_figure(fig, path, dpi=110)
