"""The one way a difference is printed: signed, in points (x100) unless told otherwise, and never `-0` (a
difference that rounds to zero is printed `0`, whichever side of zero it fell)."""

from __future__ import annotations

import math


def signed(value: float | None, decimals: int = 0, scale: float = 100.0) -> str:
    """`value` x `scale` with its sign and `decimals` places ("+3", "-0.5", "0"); "-" for None or NaN."""
    if value is None or math.isnan(value):
        return "-"
    shown = round(scale * value, decimals)
    if shown == 0:
        return f"{0.0:.{decimals}f}"
    return f"{shown:+.{decimals}f}"
