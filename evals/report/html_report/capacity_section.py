"""The run page's recall-capacity part: the capacity curve (the same figure as `capacity.png`, inline as
SVG) and one table per condition, facts down and lengths across, ending in each length's capacity."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.report.capacity import capacity_curve, capacity_grids, rule_text
from ctxprobe.evals.report.capacity_chart import capacity_figure
from ctxprobe.evals.report.html_report.charts import svg_data_uri


def capacity_section(records: list[SampleRecord], threshold: float) -> dict[str, Any] | None:
    """What the template shows, or None when no record holds facts."""
    curve = capacity_curve(records, threshold)
    grids = capacity_grids(curve)
    fig = capacity_figure(curve)
    if not grids or fig is None:
        return None
    tables = [
        {"name": f"{family} {variant} [{haystack}]", "header": header, "rows": rows}
        for (family, variant, haystack), header, rows in grids
    ]
    return {"rule": rule_text(threshold), "chart": svg_data_uri(fig), "tables": tables}
