"""`ctxprobe run --against BASELINE_RUN --fail-if-drop MARGIN`: a paired sequential run. The candidate is
sent the baseline's scored samples (same recipes, same ids), one round of seeds at a time across every
family that is still open, and each row (a family pooled over its lengths, the primary test, and each
family x length) is judged by `evals.sequential.gate` after every round: FAIL, PASS, or UNDECIDED when the
baseline's samples run out. Only the pairs decide: a sample that errored on either side leaves them.

`--metric p_answer` gates on the answer probability's paired difference instead of correctness, and
`--metric kl` on the KL of the candidate's answer distributions from the baseline's, against `--kl-margin`
nats (`evals.paired.kl_gate`). A pair counts there only when both records have answer log-probabilities;
the others are counted as lacking it, never as a zero. Every metric's rows are kept side by side where the
records have them; only the gated one decides which rows are sampled.

A nested run's rows bet on chains (`evals.compare.clusters`): a round is one seed, so it brings each open
family one chain, whose pairs share a haystack and are not independent; the round's pairs of a chain enter
a row as one observation, their mean (a correctness row then holds values in [-1, 1], not counts). The chains
of successive rounds are independent, so each row's wealth stays a supermartingale and the gate's error
rates hold. The table's `n` still counts pairs; `clusters` the chains they came in."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare import metrics
from ctxprobe.evals.compare.clusters import chain_means, cluster_of, is_clustered
from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.sequential.betting import PairedValues
from ctxprobe.evals.compare.sequential.ci_outputs import SEQUENTIAL_INTERVAL, GateCase, metric_text
from ctxprobe.evals.compare.sequential.gate import (
    PASS_MEANING,
    SequentialRow,
    decide,
    fewest_to_pass,
    final_verdicts,
    gate_verdict,
    open_rows,
)
from ctxprobe.evals.records.load import Run, load_run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.rows import variant_label
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import FamilyKey, chain_key, family_key
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.sample import Recipe

RowKey = tuple[FamilyKey, int]  # length 0: the family pooled over its lengths


@dataclass
class PairedRun:
    """The baseline's scored samples and the rows' running evidence: `rows` of the gated metric, `beside`
    the other metrics' (those the baseline's records have). `margin` is the drop correctness and p_answer
    rows judge against; `kl_margin` the divergence in nats KL rows do."""

    baseline: Run
    margin: float
    alpha: float
    recipes: list[Recipe]
    base: dict[str, SampleRecord]  # the baseline's scored records by sample id
    rows: dict[RowKey, SequentialRow]
    metric: str = "correct"  # a registered gate metric (evals/compare/metrics)
    beside: dict[str, dict[RowKey, SequentialRow]] = field(default_factory=dict)
    kl_margin: float = kl_gate.KL_MARGIN
    lacking: dict[str, dict[RowKey, int]] = field(default_factory=dict)  # pairs of a row without the metric
    counted: set[str] = field(default_factory=set)
    extension: set[str] = field(default_factory=set)  # sample ids the baseline endpoint answers (lockstep)
    pairs: dict[RowKey, int] = field(
        default_factory=dict
    )  # nested: the pairs of each gated row (its tally counts chains)

    def add_baseline(self, records: dict[str, SampleRecord]) -> None:
        """The baseline endpoint's scored answers to the extension's samples."""
        self.base.update({sid: r for sid, r in records.items() if sid in self.extension})

    @property
    def by_metric(self) -> dict[str, dict[RowKey, SequentialRow]]:
        return {self.metric: self.rows, **self.beside}

    def margin_of(self, name: str) -> float:
        """The margin a metric judges against, in its own units (`--fail-if-drop`, or `--kl-margin`'s nats)."""
        return metrics.metric(name).margin_of(self.margin, self.kl_margin)

    def row_margin(self, name: str) -> float:
        """The margin a metric's rows judge against, in their own units."""
        return metrics.metric(name).row_margin(self.margin_of(name))

    def diffs(self, base: SampleRecord, cand: SampleRecord) -> dict[str, float | None]:
        """The pair's difference in each metric the rows bet on (None: a side lacks it)."""
        return {name: metrics.metric(name).diff(base, cand, self.margin_of(name)) for name in self.by_metric}


def _rows(recipes: list[Recipe], name: str) -> dict[RowKey, SequentialRow]:
    """A gate row per family (pooled) and family x length; a nested family's rows take chain means (values,
    where a correctness row would count -1/0/+1)."""
    nested = {family_key(r) for r in recipes if r.nested is not None}
    rows: dict[RowKey, SequentialRow] = {}
    for recipe in recipes:
        fam = family_key(recipe)
        for key in ((fam, 0), (fam, recipe.context_tokens)):
            if key not in rows:
                rows[key] = metrics.metric(name).row(key[1] == 0)
                if fam in nested and isinstance(rows[key].tally, PairedTally):
                    rows[key].tally = PairedValues()
    return dict(sorted(rows.items()))


def paired_run(
    baseline_dir: str | Path,
    margin: float,
    alpha: float,
    tokenizer: str,
    extend: Callable[[Run], list[Recipe]] | None = None,
    metric: str = "correct",
    kl_margin: float = kl_gate.KL_MARGIN,
) -> PairedRun:
    """The plan of a paired run against `baseline_dir`; one line when it cannot be one. `extend` gives the
    samples the baseline endpoint adds in lockstep (`lockstep.extension_recipes`). `metric`: what the gate
    judges (`evals.compare.metrics`: correct, the answer probability, KL against `kl_margin` nats, or one
    registered beside them); the baseline's records must have it."""
    if not 0.0 <= margin < 1.0:
        raise UserError(f"--fail-if-drop must be between 0 and 1, got {margin}")
    try:
        kl_gate.check_margin(kl_margin)
    except ValueError as e:
        raise UserError(str(e)) from None
    baseline = load_run(baseline_dir)
    if baseline.manifest.tokenizer and tokenizer and baseline.manifest.tokenizer != tokenizer:
        raise UserError(
            f"--against {baseline.dir}: the baseline was counted by tokenizer {baseline.manifest.tokenizer}, "
            f"this endpoint's is {tokenizer}: the prompts would differ"
        )
    scored = [r for r in baseline.records if r.error is None and r.score is not None]
    if not scored:
        raise UserError(f"--against {baseline.dir}: the baseline has no scored sample")
    name = metric
    gated = metrics.metric(name)
    has = {m: metrics.metric(m).available(scored) for m in metrics.metric_names()}
    if not has[name]:
        raise UserError(gated.missing(str(baseline.dir)))
    extra = extend(baseline) if extend is not None else []
    recipes = sorted([*(r.sample.recipe for r in scored), *extra], key=lambda r: r.seed)
    return PairedRun(
        baseline=baseline,
        margin=margin,
        alpha=alpha,
        recipes=recipes,
        base={r.sample.sample_id: r for r in scored},
        rows=_rows(recipes, name),
        metric=name,
        beside={m: _rows(recipes, m) for m in metrics.metric_names() if m != name and has[m]},
        kl_margin=kl_margin,
        extension={r.sample_id() for r in extra},
    )


def pass_reach(plan: PairedRun) -> str | None:
    """One line where the baseline's nested families hold fewer chains than a PASS of their pooled rows can
    take at this margin (`gate.fewest_to_pass`, every chain equal: the fewest for any model): such a run can
    FAIL the candidate, never PASS it, and an equal build is sent every chain to end UNDECIDED. None where a
    PASS is within reach (or no family is nested)."""
    chains: dict[FamilyKey, set[str]] = defaultdict(set)
    for recipe in plan.recipes:
        if recipe.nested is not None:
            chains[family_key(recipe)].add(chain_key(recipe))
    if not chains:
        return None
    fam, held = min(chains.items(), key=lambda kv: (len(kv[1]), kv[0]))
    tally = plan.rows[(fam, 0)].tally
    if not isinstance(tally, PairedValues):
        return None
    margin = plan.row_margin(plan.metric)
    need = fewest_to_pass(margin, plan.alpha, tally.lo, tally.hi) if 0.0 < margin < -tally.lo else None
    if need is None or len(held) >= need:
        return None
    return (
        f"--against: the baseline's nested families hold {len(held)} chain{'' if len(held) == 1 else 's'} "
        f"({'at the fewest: ' if len(chains) > 1 else ''}{fam[0]}), and a row of chains PASSes at "
        f"this margin from {need} at the fewest (every chain equal): this run can FAIL the candidate but not "
        f"PASS it, and an equal build is sent every chain to end UNDECIDED. To PASS one: a baseline of {need} "
        "chains or more, or the independent layout's pairs (a suite's -independent twin)"
    )


def update(plan: PairedRun, records: list[SampleRecord]) -> None:
    """Add the candidate's newly finished pairs to their rows (one look per round) and decide."""
    fresh: dict[str, dict[RowKey, list[float]]] = {m: defaultdict(list) for m in plan.by_metric}
    chains: dict[str, dict[RowKey, list[str]]] = {m: defaultdict(list) for m in plan.by_metric}
    for record in records:
        sid = record.sample.sample_id
        if sid in plan.counted or sid not in plan.base or record.error is not None or record.score is None:
            continue
        plan.counted.add(sid)
        diffs = plan.diffs(plan.base[sid], record)
        recipe = record.sample.recipe
        chain = cluster_of(record)
        for key in ((family_key(recipe), 0), (family_key(recipe), recipe.context_tokens)):
            if recipe.nested is not None:
                plan.pairs[key] = plan.pairs.get(key, 0) + 1
            for name in plan.by_metric:
                if (diff := diffs[name]) is not None:
                    fresh[name][key].append(diff)
                    chains[name][key].append(chain)
                elif not metrics.metric(name).always:
                    lacking = plan.lacking.setdefault(name, {})
                    lacking[key] = lacking.get(key, 0) + 1
    for name, rows in plan.by_metric.items():
        for key, values in fresh[name].items():
            # one observation per chain (each sample its own chain in the independent layout: as before)
            rows[key].add_diffs(
                chain_means(values, chains[name][key]) if is_clustered(chains[name][key]) else values,
                plan.row_margin(name),
            )
    decide(list(plan.rows.values()), plan.row_margin(plan.metric), plan.alpha)


def next_paired_round(plan: PairedRun, records: list[SampleRecord], sent: set[str]) -> list[Recipe]:
    """The next seed's samples of every row still open (`gate.open_rows`: every length of a family whose
    pooled row is undecided, else the lengths that look like a drop; none: all decided or used up)."""
    update(plan, records)
    done = {r.sample.sample_id for r in records if r.error is None} | sent
    wanted: set[RowKey] = set()
    for fam in {f for (f, _) in plan.rows}:
        keys = [key for key in plan.rows if key[0] == fam]
        rows = [plan.rows[k] for k in keys]
        wanted |= {key for key, want in zip(keys, open_rows(rows, plan.row_margin(plan.metric))) if want}
    todo = [r for r in plan.recipes if (family_key(r), r.context_tokens) in wanted and r.sample_id() not in done]
    if not todo:
        return []
    first = min(r.seed for r in todo)
    return [r for r in todo if r.seed == first]


def shown(plan: PairedRun, name: str, row: SequentialRow) -> dict[str, float]:
    """A row's mean difference and interval in the metric's own units: fractions for correct and p_answer,
    nats of (capped) KL for kl, where a larger value is worse."""
    return metrics.metric(name).shown(row, plan.alpha, plan.margin_of(name))


def gate_report(plan: PairedRun) -> dict[str, Any]:
    """The verdicts, for the manifest and the table: one entry per row, the gate's outcome."""
    rows = list(plan.rows.values())
    verdicts = final_verdicts(rows, plan.row_margin(plan.metric), plan.alpha)
    entries = []
    for ((family, params, haystack), length), row, verdict in zip(plan.rows, rows, verdicts):
        of_row = [
            r.sample_id()
            for r in plan.recipes
            if family_key(r) == (family, params, haystack) and length in (0, r.context_tokens)
        ]
        planned = sum(1 for sid in of_row if sid not in plan.extension)
        extended = sum(1 for sid in of_row if sid in plan.extension and sid in plan.base)
        key = ((family, params, haystack), length)
        entry = {
            "family": family,
            "params": json.loads(params),
            "haystack": haystack,
            "context_tokens": length,
            "primary": row.primary,
            "verdict": verdict,
            "n": plan.pairs.get(key, row.tally.n),
            "baseline_samples": planned,
            **({"clusters": row.tally.n} if key in plan.pairs else {}),
            "baseline_extended": extended,
            "losses": row.tally.losses,
            "wins": row.tally.wins,
            **shown(plan, plan.metric, row),
            "p_fail": row.p_fail,
            "p_pass": row.p_pass,
            "rounds": row.rounds,
        }
        for name in (m for m in metrics.metric_names() if not metrics.metric(m).always and m in plan.by_metric):
            entry[f"lacking_{name}"] = plan.lacking.get(name, {}).get(key, 0)
        entry["beside"] = [
            {"metric": m, "n": other[key].tally.n, **shown(plan, m, other[key])} for m, other in plan.beside.items()
        ]
        entries.append(entry)
    return {
        "baseline": str(plan.baseline.dir),
        "baseline_extended": len(plan.extension & set(plan.base)),
        "margin": plan.margin,
        "alpha": plan.alpha,
        "metric": plan.metric,
        **({"kl_margin": plan.kl_margin} if "kl" in plan.by_metric else {}),
        "method": metrics.metric(plan.metric).method,
        "verdict": gate_verdict(rows, verdicts),
        "rows": entries,
    }


def _beside(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The other metrics of a row: a list, or the one dict that manifests written before KL hold."""
    found = entry.get("beside") or []
    return [found] if isinstance(found, dict) else list(found)


def value_text(name: str, value: float) -> str:
    """A row's difference as the table prints it: points for correct and p_answer, nats for kl."""
    if value != value:  # nan: no pairs
        return "-"
    return metrics.metric(name).text(value)


def render_gate(report: dict[str, Any]) -> str:
    """The paired run's table: each row's verdict, difference, interval and the pairs it used of the
    baseline's."""
    gated = report.get("metric", "correct")
    on = f" --metric {gated}" if gated != "correct" else ""
    margin = (
        f"--kl-margin {report.get('kl_margin', kl_gate.KL_MARGIN)}"
        if metrics.metric(gated).margin_flag == "--kl-margin"
        else f"--fail-if-drop {report['margin']}"
    )
    others = [b["metric"] for b in _beside(report["rows"][0])] if report["rows"] else []
    lines = [
        f"paired against {report['baseline']} ({margin}{on}): {report['verdict']}",
        f"{'row':<52} {'verdict':>9} {'diff':>7} {'interval':>17} {'pairs used':>12}"
        + (f"  beside it: {', '.join(others)}: diff [interval] n" if others else ""),
    ]
    for e in report["rows"]:
        variant = variant_label(e["params"], e["family"])
        where = f"{e['family']} {variant} [{e['haystack']}] " + (
            "pooled" if e["primary"] else format_length(e["context_tokens"])
        )
        interval = f"[{value_text(gated, e['diff_lo'])}, {value_text(gated, e['diff_hi'])}]"
        diff = "-" if e["n"] == 0 else value_text(gated, e["diff"])
        held = f"{e['baseline_samples']}" + (f"+{e['baseline_extended']}" if e.get("baseline_extended") else "")
        line = f"{where[:52]:<52} {e['verdict']:>9} {diff:>7} {interval:>17} {e['n']:>5} of {held:<4}"
        if "clusters" in e:
            line += f"  ({e['clusters']} chains)"
        for b in _beside(e):
            m = b["metric"]
            line += (
                f"  no {m}"
                if b["n"] == 0
                else f"  {m} {value_text(m, b['diff'])} "
                f"[{value_text(m, b['diff_lo'])}, {value_text(m, b['diff_hi'])}] {b['n']}"
            )
        if e.get(f"lacking_{gated}"):
            line += f"  ({e[f'lacking_{gated}']} pairs without {gated})"
        lines.append(line)
    if report.get("baseline_extended"):
        lines.append(
            f"the baseline endpoint answered {report['baseline_extended']} more samples in lockstep "
            "(of N+M: N the baseline run held, M it added)"
        )
    units = [
        metrics.metric(m).unit_note
        for m in metrics.metric_names()
        if metrics.metric(m).unit_note and (m == gated or m in others)
    ]
    lines.append(
        f"method: {report['method']}. Each bound of the interval is one-sided at 95 % (a 90 % "
        "betting confidence sequence, not adjusted for the rows); a pooled row stops taking pairs once decided. "
        + PASS_MEANING
        + "".join(f" {u}." for u in units)
    )
    return "\n".join(lines) + "\n"


def gate_cases(report: dict[str, Any], candidate: str) -> list[GateCase]:
    """The paired run's rows as CI cases (JUnit, markdown summary)."""
    out = []
    for e in report["rows"]:
        where = f"{e['family']} {variant_label(e['params'], e['family'])} [{e['haystack']}] " + (
            "all lengths" if e["primary"] else format_length(e["context_tokens"])
        )
        other = "; ".join(
            metric_text(
                b["metric"],
                b["diff"] if b["n"] else float("nan"),
                b["diff_lo"],
                b["diff_hi"],
                b["n"],
                SEQUENTIAL_INTERVAL,
            )
            for b in _beside(e)
        )
        out.append(
            GateCase(
                candidate=candidate,
                where=where,
                primary=e["primary"],
                verdict=e["verdict"],
                diff=e["diff"] if e["n"] else float("nan"),
                diff_lo=e["diff_lo"],
                diff_hi=e["diff_hi"],
                n=e["n"],
                detail=f"{e['n']} of the baseline's {e['baseline_samples']} samples used, "
                f"anytime-valid p (FAIL side) {e['p_fail']:.3g}",
                interval=SEQUENTIAL_INTERVAL,
                metric=report.get("metric", "correct"),
                other=other,
            )
        )
    return out
