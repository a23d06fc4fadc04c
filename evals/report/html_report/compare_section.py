"""What a `ctxprobe compare` folder shows on the page, read from its `compare.json` through the versioned
model (so comparisons written by older versions read the same): the inputs, the per-row verdicts
(difference, paired interval, Holm-adjusted p), diff heatmaps (as tables from the cell rows, and the PNGs
compare wrote), and examples where the builds disagree, with both raw outputs where the run folders are
still there."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare.paired.kl_text import gate_line
from ctxprobe.evals.compare.paired.verdict import compare_verdict, undecided_text
from ctxprobe.evals.compare.signed import signed
from ctxprobe.evals.records.compare import COMPARE_JSON, read_compare
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.report.html_report.charts import diff_colour, png_data_uri
from ctxprobe.evals.report.html_report.kl_section import kl_section
from ctxprobe.evals.report.html_report.prompt_window import PromptRebuilder
from ctxprobe.evals.report.html_report.shown_text import clipped
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.lengths import format_length

__all__ = ["COMPARE_JSON", "compare_section", "verdict_rows"]


def _pct(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * float(x):.0f}%"


def _pts(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else signed(float(x))


def _p(x: Any) -> str:
    return "–" if x is None else f"{float(x):.3g}"


def _of(correct: Any, n: Any) -> str:
    """`18/20`; empty where a comparison written by another version lacks the counts."""
    return "" if correct is None or n is None else f"{int(correct)}/{int(n)}"


def verdict_rows(rows: list[dict[str, Any]], candidate: str) -> list[dict[str, Any]]:
    """The family x length rows of one candidate (`CompareRow`s as dicts), each with its verdict (DROP / GAIN /
    no difference): what the `verdict_table` macro shows, on compare pages and a run's template sensitivity."""
    out = []
    for r in rows:
        if r.get("candidate") != candidate or r.get("level") not in ("family", "family_length"):
            continue  # the pooled family row (the gate's primary test) first, then each length
        diff = float(r.get("diff", 0.0))
        verdict = ("DROP" if diff < 0 else "GAIN") if r.get("significant") else "no significant difference"
        out.append(
            {
                "family": r.get("family"),
                "variant": r.get("variant"),
                "haystack": r.get("haystack"),
                "length": "pooled" if r.get("level") == "family" else format_length(int(r.get("context_tokens", 0))),
                "n": r.get("n"),
                "base": _pct(r.get("base_accuracy")),
                "cand": _pct(r.get("cand_accuracy")),
                "diff": _pts(diff),
                "base_k": _of(r.get("base_correct"), r.get("n")),
                "cand_k": _of(r.get("cand_correct"), r.get("n")),
                "interval": f"[{_pts(r.get('diff_lo'))}, {_pts(r.get('diff_hi'))}]",
                "p": _p(r.get("p_value")),
                "p_holm": _p(r.get("p_holm")),
                "verdict": verdict,
                "background": diff_colour(diff)[0] if r.get("significant") else "transparent",
                "p_answer": _p_answer(r.get("p_answer")),
            }
        )
    return out


def _p_answer(pa: dict[str, Any] | None) -> dict[str, str] | None:
    """A row's answer-probability columns (each build's mean; the paired difference in probability points
    with its anytime-valid interval and the pairs that have it), None where the row has none."""
    if not pa:
        return None
    of = f"{pa.get('n')}" + (f"/{int(pa['n']) + int(pa['missing'])}" if pa.get("missing") else "")
    return {
        "means": f"{float(pa['base']):.3f} → {float(pa['cand']):.3f}",
        "diff": f"{signed(float(pa['diff']), 1)} [{signed(float(pa['lo']), 1)}, {signed(float(pa['hi']), 1)}], {of}",
    }


def diff_tables(rows: list[dict[str, Any]], candidate: str) -> list[dict[str, Any]]:
    """Per family/variant/haystack: depth rows x length columns of candidate-minus-baseline accuracy."""
    panels: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("candidate") == candidate and r.get("level") == "cell":
            panels.setdefault((r["family"], r["variant"], r["haystack"]), []).append(r)
    out = []
    for (family, variant, haystack), cells in sorted(panels.items()):
        depths = sorted({float(c.get("depth") or 0.0) for c in cells})
        lengths = sorted({int(c["context_tokens"]) for c in cells})
        at = {(float(c.get("depth") or 0.0), int(c["context_tokens"])): c for c in cells}
        grid = []
        for d in depths:
            line = []
            for n in lengths:
                c = at.get((d, n))
                if c is None:
                    line.append({"text": "", "sub": "", "background": "#d9d9d9", "colour": "#444", "title": ""})
                    continue
                bg, fg = diff_colour(float(c["diff"]))
                line.append(
                    {
                        "text": _pts(c["diff"]),
                        "sub": f"{_pct(c['base_accuracy'])}→{_pct(c['cand_accuracy'])} n={c['n']}",
                        "background": bg,
                        "colour": fg,
                        "title": f"p={_p(c.get('p_value'))} (unadjusted)",
                    }
                )
            grid.append((f"{d:g}%", line))
        out.append(
            {
                "family": family,
                "variant": variant,
                "haystack": haystack,
                "lengths": [format_length(n) for n in lengths],
                "rows": grid,
            }
        )
    return out


def _load(path: str | None) -> tuple[PromptRebuilder | None, dict[str, SampleRecord]]:
    """A run's prompt rebuilder and records by sample id; nothing where the folder is gone."""
    if not path or not Path(path).is_dir():
        return None, {}
    try:
        run = load_run(path)
    except UserError:
        return None, {}
    return PromptRebuilder(run.manifest), {r.sample.sample_id: r for r in run.records}


def disagreements(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison's examples, with both builds' raw outputs and the candidate's prompt around the
    needle where the run folders can still be read."""
    _, base = _load(data.get("baseline", {}).get("path"))
    base_by_task = {r.sample.recipe.task_key(): r for r in base.values()}
    paths = {c.get("label"): c.get("path") for c in data.get("candidates", [])}
    loaded: dict[str, tuple[PromptRebuilder | None, dict[str, SampleRecord]]] = {}
    out = []
    for ex in data.get("examples", []):
        label = ex.get("candidate", "")
        if label not in loaded:
            loaded[label] = _load(paths.get(label))
        rebuilder, records = loaded[label]
        cand = records.get(ex.get("sample_id", ""))
        pair = base_by_task.get(cand.sample.recipe.task_key()) if cand else None
        depth = ex.get("needle_depth")
        out.append(
            {
                "candidate": label,
                "where": ex.get("where", ""),
                "worse": ex.get("worse", ""),
                "expected": " | ".join(ex.get("expected", [])),
                "base_extracted": " | ".join(ex.get("base_extracted", [])) or "(nothing)",
                "cand_extracted": " | ".join(ex.get("cand_extracted", [])) or "(nothing)",
                "needle_depth": "?" if depth is None else f"{float(depth):.1f}%",
                "question": cand.sample.question if cand else None,
                "base_raw": clipped(pair.response.text) if pair and pair.response else None,
                "cand_raw": clipped(cand.response.text) if cand and cand.response else None,
                "prompt": rebuilder.context(cand) if rebuilder and cand else None,
            }
        )
    return out


def pairing_text(p: dict[str, Any]) -> str:
    """How one candidate paired with the baseline, and what was left out, in a line."""
    if not p:
        return ""
    text = (
        f"{p.get('pairs', 0)} pairs ({p.get('by_prompt', 0)} same prompt, {p.get('by_task', 0)} same task "
        f"fields only); unpaired: {p.get('unpaired_base', 0)} baseline, {p.get('unpaired_cand', 0)} candidate"
    )
    for side, key in (("baseline", "errored_base"), ("candidate", "errored_cand")):
        if p.get(key):
            text += f"; left out, errored in {side}: " + ", ".join(f"{v} {k}" for k, v in sorted(p[key].items()))
    return text


def compare_section(folder: Path) -> dict[str, Any]:
    """Everything the compare template shows."""
    result = read_compare(folder)
    data = result.model_dump(mode="json")
    rows = data.get("rows", [])
    inputs = [dict(c, role="candidate") for c in data.get("candidates", [])]
    if data.get("baseline"):
        inputs.insert(0, dict(data["baseline"], role="baseline"))
    pairings = {p.get("candidate"): p for p in data.get("pairings", [])}
    candidates = [
        {
            "label": c.get("label"),
            "pairing": pairing_text(pairings.get(c.get("label"), {})),
            "signals": pairings.get(c.get("label"), {}).get("signals", []),
            "verdicts": verdict_rows(rows, c.get("label")),
            "diffs": diff_tables(rows, c.get("label")),
        }
        for c in data.get("candidates", [])
    ]
    images = [(p.name, png_data_uri(p)) for p in sorted(folder.glob("diff_heatmap_*.png"))]
    labels = [i.get("label", "?") for i in inputs]
    return {
        "kind": "compare",
        "title": "compare " + " vs ".join(labels),
        "path": str(folder),
        "inputs": inputs,
        "warnings": data.get("warnings", []),
        "candidates": candidates,
        "images": images,
        "examples": disagreements(data),
        "alpha": data.get("alpha"),
        "fail_if_drop": data.get("fail_if_drop"),
        "failed": [
            f"{r.get('candidate')} {r.get('family')} {r.get('variant')} "
            f"{format_length(int(r.get('context_tokens', 0)))} {_pts(r.get('diff'))} "
            f"(p_holm {_p(r.get('p_holm'))})"
            for r in data.get("failed", [])
        ],
        "gate": gate_line(result),
        "verdict": compare_verdict(result),
        "undecided": undecided_text(result) if compare_verdict(result) == "UNDECIDED" else "",
        "methods": [(k, data[k]) for k in ("interval_method", "p_method", "partial_method") if data.get(k)],
        "kl": kl_section(result.kl, folder),
        "raw": None if rows or inputs else json.dumps(data, indent=2)[:20000],
    }
