"""The colour scale of KL at depth, shared by the KL heatmap PNGs (`evals.compare.kl_heatmap`) and the
report's KL tables, so the page and the PNGs read alike: yellow to red on a log scale fixed at 1e-4..3 nats
(below 1e-4 reads as the same model, above 3 as another answer), grey with no data."""

from __future__ import annotations

import math

import matplotlib
from matplotlib.colors import LogNorm, to_hex

KL_CMAP = matplotlib.colormaps["YlOrRd"].with_extremes(bad="#d9d9d9")
KL_RANGE = (1e-4, 3.0)


def kl_norm() -> LogNorm:
    return LogNorm(*KL_RANGE, clip=True)


def kl_position(value: float) -> float:
    """Where `value` (nats) falls on the scale, 0..1 (values below the scale's floor at 0)."""
    return float(kl_norm()(max(value, KL_RANGE[0])))


def kl_colour(value: float) -> tuple[str, str]:
    """Background and text colour of a KL cell."""
    if math.isnan(value):
        return "#d9d9d9", "#444444"
    at = kl_position(value)
    r, g, b, _ = KL_CMAP(at)
    return to_hex((r, g, b)), "#ffffff" if at > 0.7 else "#000000"
