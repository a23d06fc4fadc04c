"""What a finished (or interrupted) run writes beside its samples: summary tables and heatmaps (the answers by
depth where they are attributed; for tasks that hold a number of facts, the capacity tables and `capacity.png`),
and the text table printed in the terminal."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.safe_write import replace_file
from ctxprobe.evals.records.write_errors import WriteFailed, writable
from ctxprobe.evals.report.cache_path import SUSPECT, control_of, render_cache_path, with_cache_path
from ctxprobe.evals.report.judge import render_judge
from ctxprobe.evals.report.stopping import stopping_of
from ctxprobe.evals.report.table import render_text, write_summary


def run_title(manifest: RunManifest) -> str:
    parts = [manifest.label, manifest.model or "", manifest.engine.engine if manifest.engine else ""]
    return " · ".join(p for p in parts if p)


def capacity_threshold(manifest: RunManifest) -> float:
    """The accuracy a capacity must hold: the run's `--threshold` where it gave one, else 0.9."""
    from ctxprobe.evals.report.capacity import DEFAULT_THRESHOLD

    given = manifest.options.get("threshold")
    return float(given) if isinstance(given, (int, float)) else DEFAULT_THRESHOLD


def write_report(records: list[SampleRecord], run_dir: Path, manifest: RunManifest) -> str:
    """Write summary.csv / summary_by_context.csv / summary.md and one heatmap PNG per family (and the
    capacity section and PNG where tasks hold facts); return the terminal table."""
    if not records:
        return "no finished samples yet\n"
    from ctxprobe.evals.compare.accuracy import framed

    with framed(records):  # the tables, summary files and heatmaps frame these records once
        return _write_report(records, run_dir, manifest)


def _write_report(records: list[SampleRecord], run_dir: Path, manifest: RunManifest) -> str:
    from ctxprobe.evals.compare.paired.templates import render_template_sensitivity
    from ctxprobe.evals.report.answer_probs import render_answer_probabilities
    from ctxprobe.evals.report.attribution import attribution_markdown, render_attribution
    from ctxprobe.evals.report.capacity import capacity_curve, capacity_markdown, capacity_text
    from ctxprobe.evals.report.capacity_chart import write_capacity_png
    from ctxprobe.evals.report.heatmap import write_heatmaps
    from ctxprobe.evals.report.ruler_beside import render_ruler_beside

    stopping = stopping_of(manifest)
    layouts = render_template_sensitivity(records)
    judged = render_judge(records, run_dir)
    curve = capacity_curve(records, capacity_threshold(manifest))
    capacity = capacity_text(curve)
    ruler = render_ruler_beside(records)
    probabilities = render_answer_probabilities(records)
    attributed = render_attribution(records)
    table = with_cache_path(
        render_text(records, stopping=stopping) + attributed + probabilities + ruler + layouts + judged + capacity,
        manifest,
    )
    control = control_of(manifest)
    if not writable(run_dir):  # a read-only folder is still read: the table, without refreshing its files
        return table + f"(summary files not refreshed: {run_dir} is read-only)\n"
    try:
        write_summary(records, run_dir, stopping=stopping)
        if control is not None:
            with (run_dir / "summary.md").open("a", encoding="utf-8") as md:
                head = f"\n**{SUSPECT}**\n" if control.fault else ""
                md.write(f"{head}\n## Cache path\n\n```\n" + render_cache_path(control) + "```\n")
        if attributed:
            with (run_dir / "summary.md").open("a", encoding="utf-8") as md:
                md.write("\n" + attribution_markdown(records))
        if probabilities:
            with (run_dir / "summary.md").open("a", encoding="utf-8") as md:
                md.write("\n## Answer probabilities\n\n```\n" + probabilities + "```\n")
        if ruler:
            with (run_dir / "summary.md").open("a", encoding="utf-8") as md:
                md.write("\n## RULER's metric beside ctxprobe's\n\n```\n" + ruler + "```\n")
        write_heatmaps(records, run_dir, run_title(manifest))
        if capacity:
            with (run_dir / "summary.md").open("a", encoding="utf-8") as md:
                md.write("\n" + capacity_markdown(curve))
            write_capacity_png(curve, run_dir, run_title(manifest))
        if judged:
            replace_file(run_dir / "judge.md", "```\n" + judged.strip() + "\n```\n")
        if layouts:
            replace_file(run_dir / "template_sensitivity.md", "```\n" + layouts.strip() + "\n```\n")
    except WriteFailed as exc:  # a full disk: the table still shows
        return table + f"(summary files not written: {exc.reason})\n"
    except OSError as exc:
        return table + f"(summary files not written: {WriteFailed(run_dir, exc).reason})\n"
    return table
