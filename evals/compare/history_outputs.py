"""What `history` shows: a terminal table (one row per run, one column per family x length), the
night-to-night drops, history.md / history.json and a trend PNG, in `results/history-<suite>/` (replaced
each time, so a nightly job links one stable place)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from matplotlib.figure import Figure

from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.history import HISTORY_JSON, HistoryPoint, HistoryResult
from ctxprobe.evals.records.outputs import write_output
from ctxprobe.evals.records.safe_write import make_folder, replace_file, save_figure
from ctxprobe.tasks.lengths import format_length

Column = tuple[str, str, str, int]


def _column(p: HistoryPoint) -> Column:
    return (p.family, p.variant, p.haystack, p.context_tokens)


def _when(created: float) -> str:
    return dt.datetime.fromtimestamp(created, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _cell(p: HistoryPoint | None) -> str:
    if p is None or p.accuracy is None:
        return "-"
    text = f"{100 * p.accuracy:.0f}% [{100 * p.ci_lo:.0f}-{100 * p.ci_hi:.0f}] ({p.n})"
    return text + (f" +{p.errors}err" if p.errors else "")


def table_rows(result: HistoryResult) -> list[list[str]]:
    columns = sorted({_column(p) for p in result.points})
    header = ["run", "created (UTC)"] + [f"{c[0]} {c[1]} {format_length(c[3])}" for c in columns]
    rows = [header]
    for run in result.runs:
        cells = {_column(p): p for p in result.points if p.run == run.path}
        rows.append([run.label, _when(run.created)] + [_cell(cells.get(c)) for c in columns])
    return rows


def step_lines(result: HistoryResult) -> list[str]:
    names = {r.path: r.label for r in result.runs}
    lines = []
    for step in result.steps:
        head = f"{names[step.previous]} -> {names[step.current]}: {step.pairs} pairs"
        if step.note:
            head += f" ({step.note})"
        drops = "; ".join(
            step.flagged or [f"{r.where()} {signed(r.diff)} points (p_holm {r.p_holm:.3g})" for r in step.drops]
        )
        word, none = (
            ("DIVERGES", "no divergence above the margin") if result.metric == "kl" else ("DROP", "no significant drop")
        )
        lines.append(f"{head}: " + (f"{word} {drops}" if drops else none))
        lines += [f"  with it: {signal}" for signal in step.signals]
    return lines


def _test(result: HistoryResult) -> str:
    """What flags a night, in the history's metric."""
    if result.metric == "kl":
        return (
            f"mean KL at the answer positions above {result.kl_margin:g} nats, anytime-valid betting, "
            f"Holm, alpha {result.alpha}"
        )
    if result.metric == "p_answer":
        return f"p_answer's paired difference, anytime-valid betting, Holm, alpha {result.alpha}"
    return f"exact McNemar on paired samples, Holm, alpha {result.alpha}"


def render_text(result: HistoryResult) -> str:
    rows = table_rows(result)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [
        f"suite {result.suite}: {len(result.runs)} finished runs; accuracy [95% Clopper-Pearson] (n), errors apart",
        "",
    ]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out += [f"ENGINE FAULT in {r.label}: {r.engine_fault}" for r in result.runs if r.engine_fault]
    out += ["", f"night to night ({_test(result)}):", *step_lines(result)]
    out += [f"skipped {s}" for s in result.skipped]
    return "\n".join(out) + "\n"


def plot_trend(result: HistoryResult, path: Path) -> Path:
    """One panel per family/variant/haystack: accuracy by run, a line per length with Clopper-Pearson bars;
    a flagged drop is a red ring on the night it happened."""
    panels = sorted({_column(p)[:3] for p in result.points})
    order = {run.path: i for i, run in enumerate(result.runs)}
    dropped = {(s.current, (r.family, r.variant, r.haystack, r.context_tokens)) for s in result.steps for r in s.drops}
    fig = Figure(figsize=(max(6.0, 0.9 * len(result.runs) + 3), 3.2 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        for length in sorted({p.context_tokens for p in result.points if _column(p)[:3] == panel}):
            pts = [p for p in result.points if _column(p) == (*panel, length) and p.accuracy is not None]
            xs = [order[p.run] for p in pts]
            ys = [p.accuracy or 0.0 for p in pts]
            err = [[y - p.ci_lo for y, p in zip(ys, pts)], [p.ci_hi - y for y, p in zip(ys, pts)]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=format_length(length))
            for x, y, p in zip(xs, ys, pts):
                if (p.run, _column(p)) in dropped:
                    ax.scatter([x], [y], s=220, facecolors="none", edgecolors="red", linewidths=2, zorder=5)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xticks(range(len(result.runs)), [_when(r.created) for r in result.runs], rotation=30, fontsize=7)
        ax.set_ylabel("accuracy")
        ax.set_title(
            f"{panel[0]}  {panel[1]}  [{panel[2]}]   (red ring: significant drop from the run before)", fontsize=9
        )
        ax.legend(title="length", fontsize=7)
    fig.suptitle(f"suite {result.suite}: accuracy over time")
    return save_figure(fig, path, dpi=110)


def write_history(result: HistoryResult, results_dir: Path) -> HistoryResult:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", result.suite).strip("-") or "suite"
    out_dir = results_dir / f"history-{safe}"
    make_folder(out_dir)  # rewritten file by file: an earlier history's files are replaced, nothing is deleted
    md = replace_file(out_dir / "history.md", f"# History of suite {result.suite}\n\n```\n{render_text(result)}```\n")
    paths = [md, plot_trend(result, out_dir / "trend.png"), out_dir / HISTORY_JSON]
    done = result.model_copy(update={"out_dir": str(out_dir), "files": [str(p) for p in paths]})
    write_output(paths[-1], done)
    return done
