"""Accuracy tables from finished sample records: by family x variant x context length x depth.

A cell's `n` counts scored samples only; errored samples (rejected as too long, timed out, ...) are
counted apart in `errors` and `err_<kind>` and never enter the accuracy. Coordinates come from each
record's typed recipe fields."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import pandas as pd

from ctxprobe.evals.compare.accuracy import (
    ABSENT_COLUMNS,
    CELL,
    CONDITION,
    ERROR_COLUMNS,
    absent_beside,
    absent_shown_beside,
    accuracy_table,
    aggregate,
    context_summary,
    record_frame,
)
from ctxprobe.evals.compare.stats import Z95
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.rows import variant_label
from ctxprobe.evals.records.safe_write import make_folder, replace_file
from ctxprobe.evals.report.count_note import count_note
from ctxprobe.evals.report.stopping import TAGS, Stopping, apply_stopping
from ctxprobe.tasks.lengths import format_length

__all__ = [
    "CELL",
    "CONDITION",
    "ERROR_COLUMNS",
    "absent_shown_beside",
    "accuracy_table",
    "aggregate",
    "context_summary",
    "record_frame",
    "render_markdown",
    "render_text",
    "variant_label",
    "write_summary",
]


def _pct(x: float) -> str:
    return f"{round(100 * x)}%"


def cell_text(row: pd.Series) -> tuple[str, str]:
    """`97% (30)` and its interval `[83-99]`; `- (0)` with no scored sample."""
    if row["n"] == 0:
        return "- (0)", ""
    tag = TAGS.get(str(row.get("stop", "")), "")
    return f"{_pct(row['accuracy'])} ({row['n']}{tag})", f"[{round(100 * row['ci_lo'])}-{round(100 * row['ci_hi'])}]"


_ERROR_HINTS = {"err_truncated": " (cut off at the answer budget: raise --answer-tokens)"}


def _error_note(row: pd.Series) -> str:
    return ", ".join(f"{int(row[col])} {col[4:]}{_ERROR_HINTS.get(col, '')}" for col in ERROR_COLUMNS if row[col])


def natural_key(text: str) -> tuple[Any, ...]:
    """A label's sort key with its numbers read as numbers: `facts=4` before `facts=16`."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _blocks(
    cells: pd.DataFrame, summary: pd.DataFrame, beside: AbstractSet[tuple[str, str, str]] = frozenset()
) -> Iterable[tuple[tuple[str, ...], pd.DataFrame, pd.DataFrame]]:
    """Each condition's cells and its rows by length; the absent conditions shown `beside` present ones are not
    blocks of their own."""
    groups = sorted(cells.groupby(CONDITION, sort=True), key=lambda g: tuple(natural_key(str(c)) for c in g[0]))
    for cond, block in groups:
        if tuple(str(c) for c in cond) in beside:
            continue
        mask = (summary[CONDITION] == pd.Series(cond, index=CONDITION)).all(axis=1)
        yield tuple(str(c) for c in cond), block, summary[mask]


def _grid(block: pd.DataFrame, summary: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one block: two rows per depth (accuracy, interval), then `all`, `absent` where absent
    questions were asked beside it (pooled over depths: a key the prompt holds nowhere, never in `all`), the mean
    partial credit where any was given, and errors; every row labelled."""
    contexts = sorted(block["context_tokens"].unique())
    header = ["depth"] + [format_length(int(c)) for c in contexts]
    by_cell = {(r["depth"], r["context_tokens"]): r for _, r in block.iterrows()}
    rows: list[list[str]] = []

    def add(label: str, lookup: dict[Any, pd.Series]) -> None:
        texts = [cell_text(lookup[c]) if c in lookup else ("", "") for c in contexts]
        rows.append([label] + [t[0] for t in texts])
        rows.append(["interval"] + [t[1] for t in texts])

    for depth in sorted(block["depth"].unique()):
        add(f"{depth:g}%", {c: by_cell[(depth, c)] for c in contexts if (depth, c) in by_cell})
    add("all", {r["context_tokens"]: r for _, r in summary.iterrows()})
    if "absent_n" in summary and summary["absent_n"].notna().any():  # asked beside it: a key held nowhere
        add(
            "absent",
            {
                r["context_tokens"]: pd.Series(
                    {**{k.removeprefix("absent_"): r[k] for k in ABSENT_COLUMNS}, "n": int(r["absent_n"])}, dtype=object
                )
                for _, r in summary.iterrows()
                if pd.notna(r["absent_n"])
            },
        )
    scored = summary[summary["n"] > 0]
    partial = dict(zip(scored["context_tokens"], scored["partial_mean"]))
    if ((scored["partial_mean"] - scored["accuracy"]).abs() > 1e-9).any():  # partial credit was given
        rows.append(["partial credit"] + [_pct(partial[c]) if c in partial else "" for c in contexts])
    totals = {r["context_tokens"]: int(r["errors"]) for _, r in summary.iterrows()}
    if any(totals.values()):
        rows.append(["errors"] + [str(totals.get(c, 0) or "") for c in contexts])
    return header, rows


def render_text(records: Iterable[SampleRecord], z: float = Z95, stopping: Stopping | None = None) -> str:
    """Plain-text tables for the terminal: per family/variant/haystack, depth rows x context columns,
    cells `acc (n)` over their Clopper-Pearson interval (a run stopped adaptively: its confidence sequence, and n
    tagged with why the cell stopped), an `all depths` row, and errors apart; then a line for any samples
    served at another length than planned."""
    records = list(records)
    frame = record_frame(records)
    cells = apply_stopping(aggregate(frame, CELL, z), stopping)
    summary = apply_stopping(absent_beside(aggregate(frame, [*CONDITION, "context_tokens"], z), frame, z), stopping)
    out: list[str] = [stopping.legend(), ""] if stopping else []
    for (family, variant, haystack), block, summ in _blocks(cells, summary, absent_shown_beside(frame)):
        header, rows = _grid(block, summ)
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        out.append(f"{family}  {variant}  [{haystack}]")
        for row in [header, *rows]:
            out.append("  ".join(c.rjust(w) for c, w in zip(row, widths)).rstrip())
        notes = [
            f"{format_length(int(r['context_tokens']))}: {_error_note(r)}" for _, r in summ.iterrows() if r["errors"]
        ]
        if notes:
            out.append("errors (not in n): " + "; ".join(notes))
        out.append("")
    return "\n".join(out).rstrip() + "\n" + count_note(records)


def _markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render_markdown(records: Iterable[SampleRecord], z: float = Z95, stopping: Stopping | None = None) -> str:
    """The same tables as markdown, one cell `acc (n) [lo-hi]`."""
    frame = record_frame(records)
    cells = apply_stopping(aggregate(frame, CELL, z), stopping)
    summary = apply_stopping(absent_beside(aggregate(frame, [*CONDITION, "context_tokens"], z), frame, z), stopping)
    out = ["# Accuracy by depth and context length", "", *([stopping.legend(), ""] if stopping else [])]
    for (family, variant, haystack), block, summ in _blocks(cells, summary, absent_shown_beside(frame)):
        header, rows = _grid(block, summ)
        merged = [[a[0]] + [f"{x} {y}".strip() for x, y in zip(a[1:], b[1:])] for a, b in zip(rows[::2], rows[1::2])]
        merged += [r for r in rows if r[0] == "errors"]
        out += [f"## {family} — {variant} — {haystack}", "", *_markdown(header, merged), ""]
        notes = [
            f"- {format_length(int(r['context_tokens']))}: {_error_note(r)}" for _, r in summ.iterrows() if r["errors"]
        ]
        if notes:
            out += ["Errors (not counted in n):", "", *notes, ""]
    return "\n".join(out)


def write_summary(
    records: Iterable[SampleRecord], out_dir: Path, z: float = Z95, stopping: Stopping | None = None
) -> list[Path]:
    """Write `summary.csv` (one row per cell), `summary_by_context.csv` (pooled across depths) and
    `summary.md`; return their paths."""
    records = list(records)
    out_dir = Path(out_dir)
    make_folder(out_dir)
    return [
        replace_file(out_dir / "summary.csv", apply_stopping(accuracy_table(records, z), stopping).to_csv(index=False)),
        replace_file(
            out_dir / "summary_by_context.csv",
            apply_stopping(context_summary(records, z), stopping).to_csv(index=False),
        ),
        replace_file(out_dir / "summary.md", render_markdown(records, z, stopping)),
    ]
