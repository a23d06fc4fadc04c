"""What a history shows on the page, read from `history.json` through its versioned model (written by `ctxprobe history`
into `results/history-<suite>/`): accuracy per family x length for every night, with Clopper-Pearson intervals and
errors apart, the trend chart history drew, and the nights flagged for a significant drop from the night
before (with the rows that dropped)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.history import HISTORY_JSON
from ctxprobe.evals.records.history import read_history as read_history_file
from ctxprobe.evals.report.html_report.charts import accuracy_colour, png_data_uri
from ctxprobe.evals.report.html_report.run_section import when
from ctxprobe.tasks.lengths import format_length

__all__ = ["HISTORY_JSON", "history_section", "read_history"]

Column = tuple[str, str, str, int]


def _column(p: dict[str, Any]) -> Column:
    return (p.get("family", ""), p.get("variant", ""), p.get("haystack", ""), int(p.get("context_tokens", 0)))


def _row_key(r: dict[str, Any]) -> Column:
    return (r.get("family", ""), r.get("variant", ""), r.get("haystack", ""), int(r.get("context_tokens", 0)))


def trend_table(data: dict[str, Any]) -> dict[str, Any]:
    """Runs down, family x length across; a cell flagged where that night dropped significantly."""
    points = data.get("points", [])
    columns = sorted({_column(p) for p in points})
    flagged = {(s.get("current"), _row_key(r)) for s in data.get("steps", []) for r in s.get("drops", [])}
    rows = []
    for run in data.get("runs", []):
        at = {_column(p): p for p in points if p.get("run") == run.get("path")}
        cells = []
        for c in columns:
            p = at.get(c)
            acc = p.get("accuracy") if p else None
            bg, fg = accuracy_colour(math.nan if acc is None else float(acc))
            text = "–" if acc is None else f"{100 * acc:.0f}%"
            sub = (
                ""
                if p is None
                else f"[{100 * p['ci_lo']:.0f}–{100 * p['ci_hi']:.0f}] n={p['n']}"
                + (f" +{p['errors']} err" if p.get("errors") else "")
            )
            cells.append(
                {"text": text, "sub": sub, "background": bg, "colour": fg, "flagged": (run.get("path"), c) in flagged}
            )
        rows.append({"label": run.get("label", "?"), "created": when(run.get("created")), "cells": cells})
    headers = [f"{c[0]} {c[1]} [{c[2]}] {format_length(c[3])}" for c in columns]
    return {"headers": headers, "rows": rows}


def nights(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each night against the night before: pairs, the significant drops (flagged), the signals that moved with
    them, the note."""
    names = {r.get("path"): r.get("label", "?") for r in data.get("runs", [])}
    out = []
    for s in data.get("steps", []):
        drops = [
            f"{r.get('family')} {r.get('variant')} [{r.get('haystack')}] "
            f"{format_length(int(r.get('context_tokens', 0)))}: {signed(float(r.get('diff', 0)))} points "
            f"(p_holm {float(r.get('p_holm') or 0):.3g})"
            for r in s.get("drops", [])
        ]
        out.append(
            {
                "previous": names.get(s.get("previous"), s.get("previous")),
                "current": names.get(s.get("current"), s.get("current")),
                "pairs": s.get("pairs", 0),
                "drops": drops,
                "signals": s.get("signals", []),
                "note": s.get("note"),
            }
        )
    return out


def history_section(data: dict[str, Any], folder: Path | None) -> dict[str, Any]:
    """Everything the history template shows; `folder` holds the trend PNG history drew, if any."""
    trend = folder / "trend.png" if folder is not None else None
    steps = nights(data)
    return {
        "kind": "history",
        "title": f"history of suite {data.get('suite', '?')}",
        "path": str(folder or ""),
        "suite": data.get("suite"),
        "alpha": data.get("alpha"),
        "table": trend_table(data),
        "nights": steps,
        "flagged": [s for s in steps if s["drops"]],
        "skipped": data.get("skipped", []),
        "trend": png_data_uri(trend) if trend is not None and trend.is_file() else None,
    }


def read_history(folder: Path) -> dict[str, Any]:
    """`history.json` (any version) as the plain values the template reads."""
    return read_history_file(folder).model_dump(mode="json")
