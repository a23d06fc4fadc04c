"""What a `ctxprobe limit` folder shows on the page: per endpoint, the four context lengths (advertised,
configured, accepted, effective) with where each came from, the accepted search's probes, and the
effective search's curve: accuracy with Clopper-Pearson intervals against length, the threshold, the bracket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.evals.records.limit import LIMIT_JSON, TargetLimits, read_limit
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.report.html_report.charts import Series, length_chart
from ctxprobe.evals.report.html_report.run_section import when
from ctxprobe.tasks.lengths import format_length

__all__ = ["LIMIT_JSON", "limit_section"]


def _n(x: object) -> str:
    return f"{x:,}" if x is not None else "?"


def four_numbers(t: TargetLimits) -> list[tuple[str, str, str]]:
    """(name, value, source) for advertised, configured, accepted and effective."""
    a, e = t.accepted, t.effective
    if e is None:
        effective, how = "not measured", "the effective search was skipped or had no length to try"
    elif e.effective is None:
        effective, how = f"< {_n(e.lengths[0].length)}", e.verdict
    else:
        effective = f"≥ {_n(e.effective)}" + (f" (< {_n(e.bracket[1])})" if e.bracket else "")
        how = e.verdict
    accepted = "none" if a.accepted_tokens is None else _n(a.accepted_tokens)
    return [
        ("advertised", _n(t.advertised.tokens), t.advertised.source),
        ("configured", _n(t.configured), t.configured_source or "the engine does not say"),
        (
            "accepted",
            accepted,
            f"{a.basis}; answer room {a.max_tokens} tokens; {a.requests} requests"
            + (f"; stopped by an error: {a.stopped_by_error}" if a.stopped_by_error else ""),
        ),
        ("effective", effective, how),
    ]


def target_section(t: TargetLimits) -> dict[str, Any]:
    e = t.effective
    curve = lengths = None
    if e is not None and e.lengths:
        measured = sorted((r for r in e.lengths if r.accuracy is not None), key=lambda r: r.length)
        if measured:
            series = Series(
                "accuracy (95% Clopper-Pearson)" if e.confidence == 0.95 else f"accuracy ({e.confidence:.0%})",
                [r.length for r in measured],
                [float(r.accuracy or 0.0) for r in measured],
                [r.lo for r in measured],
                [r.hi for r in measured],
            )
            bracket = (e.bracket[0], e.bracket[1]) if e.bracket else None
            curve = length_chart([series], "accuracy", threshold=e.threshold, bracket=bracket, ylim=(-0.03, 1.03))
        lengths = [
            {
                "length": format_length(r.length),
                "tokens": _n(r.length),
                "n": r.n,
                "requests": r.requests,
                "accuracy": "–" if r.accuracy is None else f"{r.accuracy:.1%}",
                "interval": f"[{r.lo:.1%}, {r.hi:.1%}]",
                "verdict": r.verdict,
                "settled": "yes" if r.settled else "no (point estimate at the cap)",
            }
            for r in e.lengths
        ]
    probes = [
        {
            "planned": _n(p.get("planned_tokens")),
            "outcome": p.get("outcome"),
            "prompt_tokens": _n(p.get("prompt_tokens")),
            "stated": _n(p.get("stated_limit")),
            "detail": str(p.get("detail") or "")[:300],
        }
        for p in t.accepted.probes
    ]
    facts = (t.engine.engine, t.engine.version, t.engine.model) if t.engine else ()
    engine = " ".join(str(x) for x in facts if x)
    return {
        "endpoint": t.endpoint,
        "engine": engine or "?",
        "numbers": four_numbers(t),
        "curve": curve,
        "lengths": lengths,
        "probes": probes,
        "verdict": e.verdict if e else None,
        "requests": f"{e.requests} samples; the equivalent full grid ({e.full_grid_lengths} lengths) would use "
        f"{e.full_grid_requests}"
        if e
        else None,
        "tasks": ", ".join(f"{task.family} {task.params}" for task in t.tasks),
    }


def limit_section(folder: Path, manifest: RunManifest) -> dict[str, Any]:
    """Everything the limit template shows (one block per endpoint measured)."""
    targets = read_limit(folder).targets
    return {
        "kind": "limit",
        "title": f"limit {manifest.label}".strip(),
        "path": str(folder),
        "header": [
            ("label", manifest.label or "-"),
            ("model", manifest.model or "?"),
            ("tokenizer", manifest.tokenizer or "?"),
            ("token counter", manifest.token_counter or "?"),
            ("ran", f"{when(manifest.created)} → {when(manifest.updated)}"),
            ("status", manifest.status),
        ],
        "targets": [target_section(t) for t in targets],
    }
