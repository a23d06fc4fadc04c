"""`ctxprobe run --against BASELINE_RUN --fail-if-drop MARGIN`: a paired sequential run. The candidate is
sent the baseline's scored samples (same recipes, same ids), one round of seeds at a time across every
family that is still open, and each row (a family pooled over its lengths, the primary test, and each
family x length) is judged by `evals.sequential.gate` after every round: FAIL, PASS, or UNDECIDED when the
baseline's samples run out. Only the pairs decide: a sample that errored on either side leaves them.

`--metric p_answer` gates on the answer probability's paired difference instead of correctness (a pair
counts there only when both records have answer probabilities; the others are counted as lacking it, never
as a zero). Both metrics' rows are kept side by side where the records have both; only the gated one
decides which rows are sampled."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.evals.log.load import Run, load_run
from ctxprobe.evals.log.record import SampleRecord
from ctxprobe.evals.log.rows import variant_label
from ctxprobe.evals.paired.p_answer import Metric, p_answer, p_answer_diff
from ctxprobe.evals.sequential.betting import PairedValues
from ctxprobe.evals.sequential.ci_outputs import SEQUENTIAL_INTERVAL, GateCase, metric_text
from ctxprobe.evals.sequential.gate import (
    GATE_METHOD, PASS_MEANING, SequentialRow, Verdict, decide, final_verdicts, gate_verdict, open_rows,
)
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import FamilyKey, family_key
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.sample import Recipe

RowKey = tuple[FamilyKey, int]  # length 0: the family pooled over its lengths


@dataclass
class PairedRun:
    """The baseline's scored samples and the rows' running evidence: `rows` of the gated metric, `beside`
    the other metric's (None where the records do not have it)."""

    baseline: Run
    margin: float
    alpha: float
    recipes: list[Recipe]
    base: dict[str, SampleRecord]  # the baseline's scored records by sample id
    rows: dict[RowKey, SequentialRow]
    metric: Metric = "correct"
    beside: dict[RowKey, SequentialRow] | None = None
    lacking: dict[RowKey, int] = field(default_factory=dict)  # pairs of a row with no p_answer on a side
    counted: set[str] = field(default_factory=set)
    extension: set[str] = field(default_factory=set)  # sample ids the baseline endpoint answers (lockstep)

    def add_baseline(self, records: dict[str, SampleRecord]) -> None:
        """The baseline endpoint's scored answers to the extension's samples."""
        self.base.update({sid: r for sid, r in records.items() if sid in self.extension})

    @property
    def by_metric(self) -> dict[Metric, dict[RowKey, SequentialRow]]:
        other: Metric = "p_answer" if self.metric == "correct" else "correct"
        return {self.metric: self.rows, **({other: self.beside} if self.beside is not None else {})}


def _rows(recipes: list[Recipe], metric: Metric) -> dict[RowKey, SequentialRow]:
    rows: dict[RowKey, SequentialRow] = {}
    for recipe in recipes:
        fam = family_key(recipe)
        for key in ((fam, 0), (fam, recipe.context_tokens)):
            if key not in rows:
                rows[key] = SequentialRow(primary=key[1] == 0, tally=PairedValues()) if metric == "p_answer" \
                    else SequentialRow(primary=key[1] == 0)
    return dict(sorted(rows.items()))


def paired_run(baseline_dir: str | Path, margin: float, alpha: float, tokenizer: str,
               extend: Callable[[Run], list[Recipe]] | None = None, metric: Metric = "correct") -> PairedRun:
    """The plan of a paired run against `baseline_dir`; one line when it cannot be one. `extend` gives the
    samples the baseline endpoint adds in lockstep (`lockstep.extension_recipes`). `metric`: what the gate
    judges (correct, or the answer probability: the baseline must then have answer probabilities)."""
    if not 0.0 <= margin < 1.0:
        raise UserError(f"--fail-if-drop must be between 0 and 1, got {margin}")
    baseline = load_run(baseline_dir)
    if baseline.manifest.tokenizer and tokenizer and baseline.manifest.tokenizer != tokenizer:
        raise UserError(f"--against {baseline.dir}: the baseline was counted by tokenizer {baseline.manifest.tokenizer}, "
                        f"this endpoint's is {tokenizer}: the prompts would differ")
    scored = [r for r in baseline.records if r.error is None and r.score is not None]
    if not scored:
        raise UserError(f"--against {baseline.dir}: the baseline has no scored sample")
    has_p = any(p_answer(r) is not None for r in scored)
    if metric == "p_answer" and not has_p:
        raise UserError(f"--metric p_answer: the baseline {baseline.dir} has no answer probabilities (run it with "
                        "--logprobs, on an engine that gives them)")
    extra = extend(baseline) if extend is not None else []
    recipes = sorted([*(r.sample.recipe for r in scored), *extra], key=lambda r: r.seed)
    other: Metric = "p_answer" if metric == "correct" else "correct"
    return PairedRun(baseline=baseline, margin=margin, alpha=alpha, recipes=recipes,
                     base={r.sample.sample_id: r for r in scored}, rows=_rows(recipes, metric), metric=metric,
                     beside=_rows(recipes, other) if has_p else None, extension={r.sample_id() for r in extra})


def update(plan: PairedRun, records: list[SampleRecord]) -> None:
    """Add the candidate's newly finished pairs to their rows (one look per round) and decide."""
    fresh: dict[Metric, dict[RowKey, list[float]]] = {"correct": defaultdict(list), "p_answer": defaultdict(list)}
    for record in records:
        sid = record.sample.sample_id
        if sid in plan.counted or sid not in plan.base or record.error is not None or record.score is None:
            continue
        plan.counted.add(sid)
        base = plan.base[sid]
        diffs: dict[Metric, float | None] = {
            "correct": float(int(record.score.correct) - int(bool(base.score and base.score.correct))),
            "p_answer": p_answer_diff(base, record)}
        recipe = record.sample.recipe
        for key in ((family_key(recipe), 0), (family_key(recipe), recipe.context_tokens)):
            for metric, diff in diffs.items():
                if diff is not None:
                    fresh[metric][key].append(diff)
            if diffs["p_answer"] is None:
                plan.lacking[key] = plan.lacking.get(key, 0) + 1
    for metric, rows in plan.by_metric.items():
        for key, values in fresh[metric].items():
            rows[key].add_diffs(values, plan.margin)
    decide(list(plan.rows.values()), plan.margin, plan.alpha)


def next_paired_round(plan: PairedRun, records: list[SampleRecord], sent: set[str]) -> list[Recipe]:
    """The next seed's samples of every row still open (`gate.open_rows`: every length of a family whose
    pooled row is undecided, else the lengths that look like a drop; none: all decided or used up)."""
    update(plan, records)
    done = {r.sample.sample_id for r in records if r.error is None} | sent
    wanted: set[RowKey] = set()
    for fam in {f for (f, _) in plan.rows}:
        keys = [key for key in plan.rows if key[0] == fam]
        wanted |= {key for key, want in zip(keys, open_rows([plan.rows[k] for k in keys], plan.margin)) if want}
    todo = [r for r in plan.recipes if (family_key(r), r.context_tokens) in wanted and r.sample_id() not in done]
    if not todo:
        return []
    first = min(r.seed for r in todo)
    return [r for r in todo if r.seed == first]


def gate_report(plan: PairedRun) -> dict[str, Any]:
    """The verdicts, for the manifest and the table: one entry per row, the gate's outcome."""
    rows = list(plan.rows.values())
    verdicts = final_verdicts(rows, plan.margin, plan.alpha)
    entries = []
    for ((family, params, haystack), length), row, verdict in zip(plan.rows, rows, verdicts):
        lo, hi = row.interval(plan.alpha)
        of_row = [r.sample_id() for r in plan.recipes if family_key(r) == (family, params, haystack)
                  and length in (0, r.context_tokens)]
        planned = sum(1 for sid in of_row if sid not in plan.extension)
        extended = sum(1 for sid in of_row if sid in plan.extension and sid in plan.base)
        key = ((family, params, haystack), length)
        entry = {"family": family, "params": json.loads(params), "haystack": haystack,
                 "context_tokens": length, "primary": row.primary, "verdict": verdict,
                 "n": row.tally.n, "baseline_samples": planned,
                 "baseline_extended": extended, "losses": row.tally.losses,
                 "wins": row.tally.wins, "diff": row.tally.mean, "diff_lo": lo, "diff_hi": hi,
                 "p_fail": row.p_fail, "p_pass": row.p_pass, "rounds": row.rounds}
        if plan.beside is not None or plan.metric == "p_answer":
            entry["lacking_p_answer"] = plan.lacking.get(key, 0)
        if plan.beside is not None:
            other = plan.beside[key]
            o_lo, o_hi = other.interval(plan.alpha)
            entry["beside"] = {"metric": "p_answer" if plan.metric == "correct" else "correct", "n": other.tally.n,
                               "diff": other.tally.mean, "diff_lo": o_lo, "diff_hi": o_hi}
        entries.append(entry)
    return {"baseline": str(plan.baseline.dir), "baseline_extended": len(plan.extension & set(plan.base)),
            "margin": plan.margin, "alpha": plan.alpha, "metric": plan.metric, "method": GATE_METHOD,
            "verdict": gate_verdict(rows, verdicts), "rows": entries}


def render_gate(report: dict[str, Any]) -> str:
    """The paired run's table: each row's verdict, difference, interval and the pairs it used of the
    baseline's."""
    metric = report.get("metric", "correct")
    on = " --metric p_answer" if metric == "p_answer" else ""
    beside = any("beside" in e for e in report["rows"])
    other = "p_answer" if metric == "correct" else "correct"
    lines = [f"paired against {report['baseline']} (--fail-if-drop {report['margin']}{on}): {report['verdict']}",
             f"{'row':<52} {'verdict':>9} {'diff':>6} {'interval':>15} {'pairs used':>12}"
             + (f"  beside it: {other} diff [interval] n" if beside else "")]
    for e in report["rows"]:
        variant = variant_label(e["params"], e["family"])
        where = f"{e['family']} {variant} [{e['haystack']}] " + ("pooled" if e["primary"] else format_length(e["context_tokens"]))
        interval = f"[{100 * e['diff_lo']:+.0f}, {100 * e['diff_hi']:+.0f}]"
        diff = "-" if e["n"] == 0 else f"{100 * e['diff']:+.0f}"
        held = f"{e['baseline_samples']}" + (f"+{e['baseline_extended']}" if e.get("baseline_extended") else "")
        line = f"{where[:52]:<52} {e['verdict']:>9} {diff:>6} {interval:>15} {e['n']:>5} of {held:<4}"
        if "beside" in e:
            b = e["beside"]
            line += ("  no p_answer" if b["n"] == 0 else f"  {100 * b['diff']:+.1f} [{100 * b['diff_lo']:+.1f}, "
                     f"{100 * b['diff_hi']:+.1f}] {b['n']}")
        if metric == "p_answer" and e.get("lacking_p_answer"):
            line += f"  ({e['lacking_p_answer']} pairs without p_answer)"
        lines.append(line)
    if report.get("baseline_extended"):
        lines.append(f"the baseline endpoint answered {report['baseline_extended']} more samples in lockstep "
                     "(of N+M: N the baseline run held, M it added)")
    lines.append(f"method: {report['method']}. Each bound of the interval is one-sided at 95 % (a 90 % "
                 "betting confidence sequence, not adjusted for the rows); a pooled row stops taking pairs once decided. "
                 + PASS_MEANING + (" p_answer's points are probability points." if metric == "p_answer" or beside else ""))
    return "\n".join(lines) + "\n"


def verdict_of(report: dict[str, Any]) -> Verdict:
    return report["verdict"]


def gate_cases(report: dict[str, Any], candidate: str) -> list[GateCase]:
    """The paired run's rows as CI cases (JUnit, markdown summary)."""
    out = []
    for e in report["rows"]:
        where = (f"{e['family']} {variant_label(e['params'], e['family'])} [{e['haystack']}] "
                 + ("all lengths" if e["primary"] else format_length(e["context_tokens"])))
        b = e.get("beside")
        other = "" if b is None else metric_text(b["metric"], b["diff"] if b["n"] else float("nan"), b["diff_lo"],
                                                 b["diff_hi"], b["n"], SEQUENTIAL_INTERVAL)
        out.append(GateCase(candidate=candidate, where=where, primary=e["primary"], verdict=e["verdict"],
                            diff=e["diff"] if e["n"] else float("nan"), diff_lo=e["diff_lo"], diff_hi=e["diff_hi"],
                            n=e["n"], detail=f"{e['n']} of the baseline's {e['baseline_samples']} samples used, "
                            f"anytime-valid p (FAIL side) {e['p_fail']:.3g}",
                            interval=SEQUENTIAL_INTERVAL, metric=report.get("metric", "correct"), other=other))
    return out
