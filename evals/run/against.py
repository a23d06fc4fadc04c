"""`ctxprobe run --against BASELINE_RUN --fail-if-drop MARGIN`: a paired sequential run. The candidate is
sent the baseline's scored samples (same recipes, same ids), one round of seeds at a time across every
family that is still open, and each row (a family pooled over its lengths, the primary test, and each
family x length) is judged by `evals.sequential.gate` after every round: FAIL, PASS, or UNDECIDED when the
baseline's samples run out. Only the pairs decide: a sample that errored on either side leaves them."""

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
from ctxprobe.evals.sequential.ci_outputs import SEQUENTIAL_INTERVAL, GateCase
from ctxprobe.evals.sequential.gate import (
    GATE_METHOD, SequentialRow, Verdict, decide, final_verdicts, gate_verdict, open_rows,
)
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import FamilyKey, family_key
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.sample import Recipe

RowKey = tuple[FamilyKey, int]  # length 0: the family pooled over its lengths


@dataclass
class PairedRun:
    """The baseline's scored samples and the rows' running evidence."""

    baseline: Run
    margin: float
    alpha: float
    recipes: list[Recipe]
    base_correct: dict[str, bool]
    rows: dict[RowKey, SequentialRow]
    counted: set[str] = field(default_factory=set)
    extension: set[str] = field(default_factory=set)  # sample ids the baseline endpoint answers (lockstep)

    def add_baseline(self, correct: dict[str, bool]) -> None:
        """The baseline endpoint's scored answers to the extension's samples."""
        self.base_correct.update({sid: ok for sid, ok in correct.items() if sid in self.extension})


def paired_run(baseline_dir: str | Path, margin: float, alpha: float, tokenizer: str,
               extend: Callable[[Run], list[Recipe]] | None = None) -> PairedRun:
    """The plan of a paired run against `baseline_dir`; one line when it cannot be one. `extend` gives the
    samples the baseline endpoint adds in lockstep (`lockstep.extension_recipes`)."""
    if not 0.0 <= margin < 1.0:
        raise UserError(f"--fail-if-drop must be between 0 and 1, got {margin}")
    baseline = load_run(baseline_dir)
    if baseline.manifest.tokenizer and tokenizer and baseline.manifest.tokenizer != tokenizer:
        raise UserError(f"--against {baseline.dir}: the baseline was counted by tokenizer {baseline.manifest.tokenizer}, "
                        f"this endpoint's is {tokenizer}: the prompts would differ")
    scored = [r for r in baseline.records if r.error is None and r.score is not None]
    if not scored:
        raise UserError(f"--against {baseline.dir}: the baseline has no scored sample")
    extra = extend(baseline) if extend is not None else []
    recipes = sorted([*(r.sample.recipe for r in scored), *extra], key=lambda r: r.seed)
    rows: dict[RowKey, SequentialRow] = {}
    for recipe in recipes:
        fam = family_key(recipe)
        rows.setdefault((fam, 0), SequentialRow(primary=True))
        rows.setdefault((fam, recipe.context_tokens), SequentialRow(primary=False))
    return PairedRun(baseline=baseline, margin=margin, alpha=alpha, recipes=recipes,
                     base_correct={r.sample.sample_id: bool(r.score and r.score.correct) for r in scored},
                     rows=dict(sorted(rows.items())), extension={r.sample_id() for r in extra})


def update(plan: PairedRun, records: list[SampleRecord]) -> None:
    """Add the candidate's newly finished pairs to their rows (one look per round) and decide."""
    fresh: dict[RowKey, list[int]] = defaultdict(lambda: [0, 0, 0])
    for record in records:
        sid = record.sample.sample_id
        if sid in plan.counted or sid not in plan.base_correct or record.error is not None or record.score is None:
            continue
        plan.counted.add(sid)
        diff = int(record.score.correct) - int(plan.base_correct[sid])
        recipe = record.sample.recipe
        for key in ((family_key(recipe), 0), (family_key(recipe), recipe.context_tokens)):
            fresh[key][diff + 1] += 1
    for key, (losses, ties, wins) in fresh.items():
        plan.rows[key].add(losses, ties, wins, plan.margin)
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
        extended = sum(1 for sid in of_row if sid in plan.extension and sid in plan.base_correct)
        entries.append({"family": family, "params": json.loads(params), "haystack": haystack,
                        "context_tokens": length, "primary": row.primary, "verdict": verdict,
                        "n": row.tally.n, "baseline_samples": planned,
                        "baseline_extended": extended, "losses": row.tally.losses,
                        "wins": row.tally.wins, "diff": row.tally.mean, "diff_lo": lo, "diff_hi": hi,
                        "p_fail": row.p_fail, "p_pass": row.p_pass, "rounds": row.rounds})
    return {"baseline": str(plan.baseline.dir), "baseline_extended": len(plan.extension & set(plan.base_correct)),
            "margin": plan.margin, "alpha": plan.alpha, "method": GATE_METHOD,
            "verdict": gate_verdict(rows, verdicts), "rows": entries}


def render_gate(report: dict[str, Any]) -> str:
    """The paired run's table: each row's verdict, difference, interval and the pairs it used of the
    baseline's."""
    lines = [f"paired against {report['baseline']} (--fail-if-drop {report['margin']}): {report['verdict']}",
             f"{'row':<52} {'verdict':>9} {'diff':>6} {'interval':>15} {'pairs used':>12}"]
    for e in report["rows"]:
        variant = variant_label(e["params"], e["family"])
        where = f"{e['family']} {variant} [{e['haystack']}] " + ("pooled" if e["primary"] else format_length(e["context_tokens"]))
        interval = f"[{100 * e['diff_lo']:+.0f}, {100 * e['diff_hi']:+.0f}]"
        diff = "-" if e["n"] == 0 else f"{100 * e['diff']:+.0f}"
        held = f"{e['baseline_samples']}" + (f"+{e['baseline_extended']}" if e.get("baseline_extended") else "")
        lines.append(f"{where[:52]:<52} {e['verdict']:>9} {diff:>6} {interval:>15} {e['n']:>5} of {held:<4}")
    if report.get("baseline_extended"):
        lines.append(f"the baseline endpoint answered {report['baseline_extended']} more samples in lockstep "
                     "(of N+M: N the baseline run held, M it added)")
    lines.append(f"method: {report['method']}. Each bound of the interval is one-sided at 95 % (a 90 % "
                 "betting confidence sequence, not adjusted for the rows); a pooled row stops taking pairs once decided.")
    return "\n".join(lines) + "\n"


def verdict_of(report: dict[str, Any]) -> Verdict:
    return report["verdict"]


def gate_cases(report: dict[str, Any], candidate: str) -> list[GateCase]:
    """The paired run's rows as CI cases (JUnit, markdown summary)."""
    out = []
    for e in report["rows"]:
        where = (f"{e['family']} {variant_label(e['params'], e['family'])} [{e['haystack']}] "
                 + ("all lengths" if e["primary"] else format_length(e["context_tokens"])))
        out.append(GateCase(candidate=candidate, where=where, primary=e["primary"], verdict=e["verdict"],
                            diff=e["diff"] if e["n"] else float("nan"), diff_lo=e["diff_lo"], diff_hi=e["diff_hi"],
                            n=e["n"], detail=f"{e['n']} of the baseline's {e['baseline_samples']} samples used, "
                            f"anytime-valid p (FAIL side) {e['p_fail']:.3g}",
                            interval=SEQUENTIAL_INTERVAL))
    return out
