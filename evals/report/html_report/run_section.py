"""What a run folder shows on the page: its header, per-family depth x length heatmaps, the accuracy table
with Clopper-Pearson intervals, the answers by depth (correct, rival, other, hallucinated), the recall capacity
where tasks hold a number of facts, template sensitivity where the run has two prompt layouts (the compare page's verdict
rows), errors by kind and length (apart from accuracy), latency / TTFT / cached share by
length, and failure examples with the prompt around the needle. Plain values for the templates: every
string here is escaped by jinja2 when it is written into the page."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ctxprobe.evals.compare.accuracy import framed
from ctxprobe.evals.compare.clusters import cluster_of
from ctxprobe.evals.compare.paired.stats import INTERVAL_METHOD
from ctxprobe.evals.compare.paired.templates import BASE_LAYOUT, template_rows
from ctxprobe.evals.records.load import Run
from ctxprobe.evals.records.outline import RecordOutline, full_records
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import SAMPLES
from ctxprobe.evals.report.cache_path import SUSPECT, control_of, render_cache_path
from ctxprobe.evals.report.html_report.capacity_section import capacity_section
from ctxprobe.evals.report.html_report.charts import Series, accuracy_colour, length_chart
from ctxprobe.evals.report.html_report.compare_section import verdict_rows
from ctxprobe.evals.report.html_report.prompt_window import PromptContext, PromptRebuilder
from ctxprobe.evals.report.html_report.shown_text import clipped
from ctxprobe.evals.report.judge import render_judge
from ctxprobe.evals.report.stopping import TAGS, Stopping, apply_stopping, stopping_of
from ctxprobe.evals.report.summary import capacity_threshold
from ctxprobe.evals.report.table import absent_shown_beside, context_summary, record_frame, variant_label
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.suite import INLINE_PREFIX, Suite

FAILURES_PER_CONDITION = 3


def when(ts: float | None) -> str:
    """A unix time as `2026-11-29 19:15 UTC` (the page is read far from where the run was)."""
    if not ts:
        return "?"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def suite_text(suite: Suite) -> str:
    """A suite by its name, and one given on the command line (`--family`) by what it holds: its tasks, lengths
    and depths."""
    if not suite.name.startswith(INLINE_PREFIX):
        return suite.name
    tasks = ", ".join(" ".join([t.family, *(f"{k}={v}" for k, v in sorted(t.params.items()))]) for t in suite.tasks)
    lengths = ", ".join(format_length(n) for n in suite.lengths)
    depths = ", ".join(f"{d:g}" for d in suite.depths)
    return f"{tasks} at {lengths} x depths {depths}% (given on the command line)"


def layout_rows(suite: Suite) -> list[tuple[str, str]]:
    """The prompts' layout, and what a chain is where the run has them."""
    layouts = {suite.layout_of(t) for t in suite.tasks}
    if "nested" not in layouts:
        return [("layout", "independent: each sample a prompt of its own")]
    which = "nested" if layouts == {"nested"} else "nested and independent (by task)"
    return [
        ("layout", which),
        (
            "chain",
            "one task and seed: a single haystack grown through the lengths, each "
            "depth a question on it; a chain's samples share their context, so intervals count chains, not samples",
        ),
    ]


def header(run: Run) -> list[tuple[str, str]]:
    """(name, value) pairs from the manifest; quantisation facts only where the run knows them."""
    m, opts = run.manifest, run.manifest.options
    facts = m.engine
    engine = " ".join(str(x) for x in (facts.engine, facts.version) if x) if facts else ""
    rows = [("model", m.model or "?"), ("engine", engine or "?"), ("label", m.label or "-")]
    if facts and facts.context_length:
        source = facts.context_source
        rows.append(("engine context", f"{facts.context_length:,}" + (f" ({source})" if source else "")))
    embedded = not m.endpoints or not opts.get("endpoints")
    if opts.get("model_file"):
        rows.append(("model file", Path(str(opts["model_file"])).name))
    if embedded and opts.get("kv_cache_type"):
        rows.append(("KV cache type", str(opts["kv_cache_type"])))
    if m.endpoints:
        rows.append(("endpoints", ", ".join(m.endpoints)))
    rows += [
        ("suite", suite_text(m.suite)),
        *layout_rows(m.suite),
        ("mode", m.mode or "?"),
        ("tokenizer", m.tokenizer or "?"),
        ("token counter", m.token_counter or "?"),
        ("ran", f"{when(m.created)} → {when(m.updated)} ({duration(m.updated - m.created)})"),
        ("status", m.status),
        (
            "samples",
            f"{m.samples_done or 0} scored, {m.samples_errored or 0} errored, "
            f"{m.samples_planned or 0} planned ({len(run.records)} records read)",
        ),
        ("ctxprobe", m.ctxprobe_version),
    ]
    probabilities = answer_probability_line(run.records, m)
    if probabilities:
        rows.append(("answer probabilities", probabilities))
    return rows


def answer_probability_line(records: list[SampleRecord], m: Any) -> str:
    """Mean p_answer and top-1 agreement over the samples measured, and what measuring them cost."""
    from ctxprobe.evals.report.answer_probs import answer_probabilities

    cells = answer_probabilities(records).values()
    n = sum(c[0] for c in cells)
    if not n:
        return "unavailable from this engine" if m.logprobs and m.logprobs.samples_unavailable else ""
    p = sum(c[0] * c[1] for c in cells) / n
    top1 = sum(c[0] * c[2] for c in cells) / n
    cost = (
        f"; {m.logprobs.extra_requests:,} extra requests, {m.logprobs.extra_prompt_tokens:,} extra prompt tokens"
        if m.logprobs
        else ""
    )
    return f"mean p_answer {p:.3f}, top-1 agreement {top1:.2f} over {n} samples{cost}"


@dataclass(frozen=True)
class Cell:
    text: str
    sub: str
    background: str
    colour: str
    title: str


@dataclass(frozen=True)
class Panel:
    variant: str
    haystack: str
    contexts: list[str]
    rows: list[tuple[str, list[Cell]]]
    error_note: str


def heatmap_panels(records: list[SampleRecord], stopping: Stopping | None = None) -> dict[str, list[Panel]]:
    """Per family, one panel per (variant, haystack): depth rows, length columns, the cell's accuracy,
    n and Clopper-Pearson interval in it, coloured on the fixed 0-1 scale of the PNG heatmaps. A run that stopped its
    cells adaptively shows each cell's confidence sequence instead, and its n tagged with why it stopped."""
    from ctxprobe.evals.report.heatmap import heatmap_grids

    out: dict[str, list[Panel]] = {}
    for family, grids in heatmap_grids(records).items():
        for g in grids:
            rows = []
            for i, depth in enumerate(g.depths):
                cells = []
                for j, ctx in enumerate(g.contexts):
                    acc, n, errs = float(g.accuracy[i, j]), int(g.n[i, j]), int(g.errors[i, j])
                    bg, fg = accuracy_colour(acc)
                    text = "–" if n == 0 else f"{acc:.2f}"
                    lo, hi, tag, why = float(g.lo[i, j]), float(g.hi[i, j]), "", ""
                    method = "95% Clopper-Pearson"
                    if stopping is not None and n:
                        lo, hi, tag, why = stopping.cell(round(acc * n), n)
                        method, why = f"{1 - stopping.rule.alpha:.0%} confidence sequence", f"; {why}"
                    sub = f"n={n}{tag}" + ("" if n == 0 else f" [{lo:.2f}, {hi:.2f}]")
                    sub += f" +{errs} err" if errs else ""
                    title = f"{format_length(ctx)} at {depth:g}%: " + (
                        "no scored sample" if n == 0 else f"{acc:.0%} of {n} scored, {method} [{lo:.2f}, {hi:.2f}]{why}"
                    )
                    cells.append(Cell(text, sub, bg, fg, title + (f"; {errs} errored (not counted)" if errs else "")))
                rows.append((f"{depth:g}%", cells))
            note = ", ".join(f"{v} {k}" for k, v in g.error_kinds.items())
            out.setdefault(family, []).append(
                Panel(g.variant, g.haystack, [format_length(c) for c in g.contexts], rows, note)
            )
    return out


def accuracy_rows(records: list[SampleRecord], stopping: Stopping | None = None) -> list[dict[str, Any]]:
    """The family x variant x haystack x length table, depths pooled, with Clopper-Pearson intervals (a run that
    stopped adaptively: confidence sequences), and beside a present question's accuracy, that of the absent
    questions asked beside it (`absent`: a key the prompt holds nowhere; the exact interval)."""
    rows = []
    beside = absent_shown_beside(record_frame(records))
    for r in apply_stopping(context_summary(records), stopping).to_dict("records"):
        if (r["family"], r["variant"], r["haystack"]) in beside:
            continue  # in the absent column of the present question's rows
        n = int(r["n"])
        acc, lo, hi, partial = (float(r[k]) for k in ("accuracy", "ci_lo", "ci_hi", "partial_mean"))
        rows.append(
            {
                "family": r["family"],
                "variant": r["variant"],
                "haystack": r["haystack"],
                "length": format_length(int(r["context_tokens"])),
                "n": f"{n}{TAGS.get(str(r.get('stop', '')), '')}",
                "correct": int(r["correct"]),
                "accuracy": f"{acc:.1%}" if n else "–",
                "interval": f"[{lo:.1%}, {hi:.1%}]" if n else "–",
                "partial": f"{partial:.2f}" if n else "–",
                "errors": int(r["errors"]),
                "absent": _absent_cell(r),
                "background": accuracy_colour(acc if n else math.nan)[0],
            }
        )
    return rows


def answer_rows(records: list[SampleRecord]) -> list[dict[str, Any]]:
    """The answers by depth (`evals.report.attribution`): correct, rival, other, hallucinated, each with its share;
    none where no answer is attributed."""
    from ctxprobe.evals.report.attribution import ANSWER_COLUMNS, answers_by_depth, share_cells

    table = answers_by_depth(records)
    return (
        []
        if table is None
        else [
            {
                "family": r["family"],
                "variant": r["variant"],
                "haystack": r["haystack"],
                "depth": f"{r['depth']:g}%",
                "n": int(r["n"]),
                **dict(zip([*ANSWER_COLUMNS, "rival_at"], share_cells(r))),
            }
            for r in table.to_dict("records")
        ]
    )


def _absent_cell(row: dict[str, Any]) -> str:
    """The absent questions asked beside a row: accuracy, n and interval; "" where none was."""
    n = row.get("absent_n")
    if n is None or n != n or not int(n):
        return ""
    return (
        f"{float(row['absent_accuracy']):.1%} ({int(n)}) "
        f"[{float(row['absent_ci_lo']):.1%}, {float(row['absent_ci_hi']):.1%}]"
    )


@dataclass(frozen=True)
class ErrorTable:
    lengths: list[str]
    rows: list[tuple[str, list[int], int, str]]  # kind, count per length, total, one detail


def error_table(records: list[SampleRecord]) -> ErrorTable | None:
    """Errored samples by kind and length, with one recorded detail per kind; None when none errored."""
    errored = [r for r in records if r.error is not None]
    if not errored:
        return None
    lengths = sorted({r.sample.recipe.context_tokens for r in errored})
    rows = []
    for kind in sorted({r.error.value for r in errored if r.error}):
        mine = [r for r in errored if r.error and r.error.value == kind]
        counts = Counter(r.sample.recipe.context_tokens for r in mine)
        detail = clipped(next((r.error_detail for r in mine if r.error_detail), "")) or ""
        rows.append((kind, [counts.get(c, 0) for c in lengths], len(mine), detail[:300]))
    return ErrorTable([format_length(c) for c in lengths], rows)


def _quantile(values: list[float], q: float) -> str:
    return f"{float(np.quantile(values, q)):.2f}" if values else "–"


@dataclass
class Timing:
    rows: list[dict[str, Any]] = field(default_factory=list)
    chart: str | None = None
    cached_reported: bool = False


def timing(records: list[SampleRecord]) -> Timing:
    """Latency and time to first token (median and 90th percentile) by length, and the share of prompt
    tokens served from cache where the engine reports it; a chart of the medians with p10-p90 bars."""
    by_length: dict[int, list[SampleRecord]] = {}
    for r in records:
        if r.response is not None:
            by_length.setdefault(r.sample.recipe.context_tokens, []).append(r)
    out = Timing()
    lat_series: list[tuple[int, list[float]]] = []
    ttft_series: list[tuple[int, list[float]]] = []
    for length in sorted(by_length):
        group = [r.response for r in by_length[length] if r.response]
        lat = [x.latency_s for x in group if x.latency_s is not None]
        ttft = [x.ttft_s for x in group if x.ttft_s is not None]
        cached = [(x.cached_tokens, x.prompt_tokens) for x in group if x.cached_tokens is not None and x.prompt_tokens]
        share = f"{sum(c for c, _ in cached) / sum(p for _, p in cached):.1%}" if cached else "not reported"
        out.cached_reported |= bool(cached)
        prompt = [x.prompt_tokens for x in group if x.prompt_tokens]
        out.rows.append(
            {
                "length": format_length(length),
                "n": len(group),
                "lat_p50": _quantile(lat, 0.5),
                "lat_p90": _quantile(lat, 0.9),
                "ttft_p50": _quantile(ttft, 0.5),
                "ttft_p90": _quantile(ttft, 0.9),
                "cached": share,
                "prompt_tokens": f"{sum(prompt) / len(prompt):,.0f}" if prompt else "–",
            }
        )
        lat_series.append((length, lat))
        if ttft:
            ttft_series.append((length, ttft))
    series = [_series(name, pts) for name, pts in (("latency", lat_series), ("TTFT", ttft_series)) if pts]
    if series:
        out.chart = length_chart(series, "seconds (median, p10–p90)")
    return out


def _series(name: str, points: list[tuple[int, list[float]]]) -> Series:
    return Series(
        name,
        [p[0] for p in points],
        [float(np.median(v)) for _, v in points],
        [float(np.quantile(v, 0.1)) for _, v in points],
        [float(np.quantile(v, 0.9)) for _, v in points],
    )


@dataclass(frozen=True)
class Failure:
    where: str
    question: str
    expected: str
    raw_output: str
    extracted: str
    needle_depths: str
    partial: str
    sample_id: str
    prompt: PromptContext


def failures(run: Run, per_condition: int = FAILURES_PER_CONDITION) -> list[Failure]:
    """Up to `per_condition` wrong answers per family/variant/haystack, spread over the lengths (the
    longest first, where failures usually are), each with the prompt around its needles."""
    wrong: dict[tuple[str, str, str], list[SampleRecord]] = {}
    for r in run.records:
        if r.error is None and r.score is not None and not r.score.correct:
            recipe = r.sample.recipe
            key = (recipe.family, variant_label(recipe.params, recipe.family), recipe.haystack)
            wrong.setdefault(key, []).append(r)
    rebuilder = PromptRebuilder(run.manifest)
    chosen = {key: _spread(recs, per_condition) for key, recs in sorted(wrong.items())}
    outlined = [r.sample.sample_id for recs in chosen.values() for r in recs if isinstance(r, RecordOutline)]
    whole = full_records(run.dir / SAMPLES, outlined)  # the needles of the few shown, where read without
    out = []
    for (family, variant, haystack), recs in chosen.items():
        for r in (whole.get(r.sample.sample_id, r) for r in recs):
            recipe, sample = r.sample.recipe, r.sample
            targets = [n for n in sample.needles if n.role != "distractor"] or sample.needles
            depths = ", ".join(f"{n.depth_pct:.1f}% ({n.role})" for n in targets) or f"{recipe.depth:g}% (planned)"
            out.append(
                Failure(
                    where=f"{family} {variant} [{haystack}] {format_length(recipe.context_tokens)} @ {recipe.depth:g}%",
                    question=sample.question,
                    expected=" | ".join(sample.expected.answers),
                    raw_output=clipped(r.response.text) or "" if r.response else "",
                    extracted=clipped(" | ".join(r.score.extracted)) or ""
                    if r.score and r.score.extracted
                    else "(nothing extracted)",
                    needle_depths=depths,
                    partial=f"{r.score.partial:.2f}" if r.score else "–",
                    sample_id=sample.sample_id,
                    prompt=rebuilder.context(r),
                )
            )
    return out


def _spread(recs: list[SampleRecord], k: int) -> list[SampleRecord]:
    """k records spread over the lengths, the longest length first; within a length in sample-id order (a hash: a
    deterministic mix of depths and seeds), taken from the first one's chain where the chain failed there too: a
    nested sample's prompt is rebuilt from its whole chain's layout, which the page then lays out once, not k times."""
    by_length: dict[int, list[SampleRecord]] = {}
    for r in sorted(recs, key=lambda r: r.sample.sample_id):
        by_length.setdefault(r.sample.recipe.context_tokens, []).append(r)
    chosen: list[SampleRecord] = []
    while len(chosen) < k and any(by_length.values()):
        for length in sorted(by_length, reverse=True):
            pool = by_length[length]
            if pool and len(chosen) < k:
                pick = next((r for r in pool if chosen and cluster_of(r) == cluster_of(chosen[0])), pool[0])
                pool.remove(pick)
                chosen.append(pick)
    return chosen


def template_tables(records: list[SampleRecord], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Template sensitivity: per layout other than ctxprobe's, the compare page's verdict rows of the run's
    own pairs (the same needles under both layouts); none when the run has one layout."""
    rows = [r.model_dump() for r in template_rows(records, alpha)]
    return [
        {"base": BASE_LAYOUT, "label": name, "verdicts": verdict_rows(rows, name)}
        for name in sorted({r["candidate"] for r in rows})
    ]


def template_methods(alpha: float = 0.05) -> str:
    return (
        f"CI: {INTERVAL_METHOD}; p: exact McNemar on the discordant pairs, Holm-adjusted over each layout's "
        f"rows; DROP or GAIN where Holm p < {alpha:g}."
    )


def run_section(run: Run) -> dict[str, Any]:
    """Everything the run template shows."""
    with framed(run.records):  # its heatmaps and tables frame these records once
        return _run_section(run)


def _run_section(run: Run) -> dict[str, Any]:
    records = run.records
    stopping = stopping_of(run.manifest)
    control = control_of(run.manifest)
    return {
        "kind": "run",
        "cache_path": render_cache_path(control).rstrip() if control else "",
        "cache_path_fault": bool(control and control.fault),
        "suspect": SUSPECT,
        "title": " · ".join(x for x in (run.manifest.label, run.manifest.model) if x) or run.dir.name,
        "path": str(run.dir),
        "header": header(run),
        "panels": heatmap_panels(records, stopping) if records else {},
        "accuracy": accuracy_rows(records, stopping) if records else [],
        "answers": answer_rows(records) if records else [],
        "stop_legend": stopping.legend() if stopping else "",
        "errors": error_table(records),
        "capacity": capacity_section(records, capacity_threshold(run.manifest)) if records else None,
        "templates": template_tables(records),
        "template_methods": template_methods(),
        "judge": render_judge(records, run.dir).strip(),
        "timing": timing(records),
        "failures": failures(run),
        "n_records": len(records),
    }
