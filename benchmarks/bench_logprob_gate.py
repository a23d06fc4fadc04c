"""What answer probabilities buy the paired gate, on the real embedded engine (llama.cpp's server, Gemma 3 270M).

Four fixed runs of the same prompts, each with answer log-probabilities (`--logprobs`): the baseline with an f16
KV cache, candidates with q4_0 and q8_0 KV caches, and a second f16 engine instance. For q4_0 against f16 and
for q8_0 and for the second f16 against the first, `run --against`'s gate is replayed in the order a paired
run sends (`evals.run.against`: each round it asks for, answered from the candidate's run), on correctness (the
binary gate), on `p_answer` and on `kl` (KL at the answer positions against the default margin,
`kl_gate.KL_MARGIN`). Printed for each: the verdict, the candidate samples and prompt tokens spent until it
decided (all of them when it did not), the pooled row's difference (points; nats for kl) and interval, and each
continuous gate's tokens as a share of the binary gate's. Then `ctxprobe compare f16 q8_0 q4_0`: its KL-at-depth
table, with the heatmap PNG written beside the runs.

    python benchmarks/bench_logprob_gate.py [--runs DIR] [--lengths 1k,2k] [--depths 0:100:25] [--samples 4]

`--runs DIR` reuses (and resumes) the runs kept there under the labels f16, q4_0, q8_0, f16b; without it they go
to a temporary folder. One engine thread (`--threads 1`): on a shared two-core machine llama.cpp's two threads
spend their time waiting on each other.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import ctxprobe
from ctxprobe.evals.compare.against import gate_report, next_paired_round, paired_run
from ctxprobe.evals.compare.paired.p_answer import p_answer, p_answer_diff
from ctxprobe.evals.compare.paired.pairing import pair_runs
from ctxprobe.evals.records.load import Run, load_run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.response import AnswerLogprobs

KV = {"f16": "f16", "q4_0": "q4_0", "q8_0": "q8_0", "f16b": "f16"}
MARGIN = 0.05
ALPHA = 0.05


def collect(root: Path, label: str, args: argparse.Namespace) -> Run:
    """The run labelled `label` under `root`: resumed if it is there, else made."""
    kept = sorted(p for p in root.glob(f"*-{label}") if (p / "manifest.json").exists())
    common = dict(threads=1, quiet=True, no_report=True, logprobs=True)
    if kept:
        if load_run(kept[-1]).manifest.status != "finished":
            ctxprobe.run(resume=str(kept[-1]), **common)  # type: ignore[arg-type]
        return load_run(kept[-1])
    result = ctxprobe.run(
        family="niah",
        lengths=args.lengths,
        depths=args.depths,
        samples=args.samples,  # type: ignore[arg-type]
        label=label,
        kv_cache_type=KV[label],
        results_dir=str(root),
        **common,
    )
    return load_run(result.run_dir)


def separated(record: SampleRecord) -> SampleRecord:
    """The record with `answer_from` set where it was written before the field (0 on every record then):
    1 where the gold's first token is the answer prefix's space, as its text in that position's top-k shows
    (runs since find it with their own tokenizer call and are returned as they are)."""
    lp = record.logprobs
    if (
        not isinstance(lp, AnswerLogprobs)
        or lp.answer_from
        or not lp.gold[:1].isspace()
        or len(lp.token_ids) < 2
        or not lp.top
        or not any(t.id == lp.token_ids[0] and not t.token.strip() for t in lp.top[0])
    ):
        return record
    return record.model_copy(update={"logprobs": lp.model_copy(update={"answer_from": 1})})


def separated_run(run: Run) -> tuple[Run, int]:
    """The run with its records `separated`, and how many were."""
    records = [separated(r) for r in run.records]
    return replace(run, records=records), sum(1 for a, b in zip(run.records, records) if a is not b)


def replayed(base: Run, cand: Run, metric: str) -> tuple[dict, int, float]:  # type: ignore[type-arg]
    """`run --against`'s gate replayed with the candidate's answers known: the rounds `next_paired_round`
    asks for, answered from the candidate run, until it asks for none. The report, the candidate samples
    sent and their prompt tokens."""
    plan = paired_run(base.dir, MARGIN, ALPHA, base.manifest.tokenizer or "", metric=metric)  # type: ignore[arg-type]
    plan.base = {sid: separated(r) for sid, r in plan.base.items()}
    answers = {r.sample.sample_id: r for r in cand.records}
    records: list[SampleRecord] = []
    sent: set[str] = set()
    tokens = 0.0
    while todo := next_paired_round(plan, records, sent):
        for recipe in todo:
            sid = recipe.sample_id()
            sent.add(sid)
            if sid in answers:  # a sample the candidate run did not keep is asked for and never answered
                records.append(answers[sid])
                r = answers[sid]
                tokens += (
                    r.response.prompt_tokens if r.response and r.response.prompt_tokens else r.sample.planned_tokens
                )
    return gate_report(plan), len(records), tokens


def gate_table(name: str, base: Run, cand: Run) -> None:
    pairs = [p for p in pair_runs(base, cand).pairs if p.base.score is not None and p.cand.score is not None]
    diffs = [d for d in (p_answer_diff(p.base, p.cand) for p in pairs) if d is not None]
    lost = sum(1 for p in pairs if p.base.score.correct and not p.cand.score.correct)  # type: ignore[union-attr]
    won = sum(1 for p in pairs if p.cand.score.correct and not p.base.score.correct)  # type: ignore[union-attr]
    mean = sum(diffs) / len(diffs)
    sd = (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)) ** 0.5
    print(f"\n{name}: {len(pairs)} pairs scored on both sides, margin {MARGIN:.0%}, alpha {ALPHA}")
    print(
        f"  correctness: candidate lost {lost}, won {won}; p_answer ({len(diffs)} pairs): mean diff "
        f"{100 * mean:+.2f} points, sd {100 * sd:.2f}"
    )
    print(f"  {'metric':<10} {'verdict':>9} {'sent':>5} {'prompt tokens':>14}   pooled row: diff [interval], pairs")
    spent = {}
    for metric in ("correct", "p_answer", "kl"):
        report, sent, tokens = replayed(base, cand, metric)
        pooled = next(e for e in report["rows"] if e["primary"])
        spent[metric] = (report["verdict"], tokens)
        shown = (
            f"{pooled['diff']:.4f} [{pooled['diff_lo']:.4f}, {pooled['diff_hi']:.4f}] nats"
            if metric == "kl"
            else f"{100 * pooled['diff']:+.1f} [{100 * pooled['diff_lo']:+.1f}, {100 * pooled['diff_hi']:+.1f}]"
        )
        print(f"  {metric:<10} {report['verdict']:>9} {sent:>5} {tokens:>14,.0f}   {shown}, {pooled['n']}")
    vb, tb = spent["correct"]
    for metric in ("p_answer", "kl"):
        vc, tc = spent[metric]
        if vc != "UNDECIDED" and tb:
            held = "" if vb != "UNDECIDED" else f" (the binary gate was still UNDECIDED after all {tb:,.0f})"
            print(f"  {metric} decided ({vc}) with {tc / tb:.0%} of the binary gate's prompt tokens{held}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, help="keep (and resume) the four runs here")
    ap.add_argument("--lengths", default="1k,2k")
    ap.add_argument("--depths", default="0:100:25")
    ap.add_argument("--samples", type=int, default=4, help="seeds per (length, depth)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.runs or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        runs, derived = {}, 0
        for label in KV:
            runs[label], n = separated_run(collect(root, label, args))
            derived += n
        for label, run in runs.items():
            scored = [r for r in run.records if r.score is not None]
            ps = [p for p in map(p_answer, scored) if p is not None]
            print(
                f"{label:>5}: {len(scored)} scored, accuracy {sum(r.score.correct for r in scored) / len(scored):.1%}, "  # type: ignore[union-attr]
                f"mean p_answer {sum(ps) / len(ps):.3f}"
                if ps
                else f"{label}: no answer probabilities"
            )
        if derived:
            print(f"({derived} records written before answer_from: the separator found in their top-k lists)")
        gate_table("q4_0 against f16", runs["f16"], runs["q4_0"])
        gate_table("q8_0 against f16", runs["f16"], runs["q8_0"])
        gate_table("f16 (a second engine) against f16", runs["f16"], runs["f16b"])
        out = root / "compare-kl"
        shown = subprocess.run(
            [
                sys.executable,
                "-m",
                "ctxprobe.evals.cli.main",
                "compare",
                *(str(runs[k].dir) for k in ("f16", "q8_0", "q4_0")),
                "--results-dir",
                str(out),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        table = shown.stdout
        print("\n" + table[table.find("KL at depth") :] if "KL at depth" in table else shown.stdout + shown.stderr)
        newest = max(out.iterdir(), key=lambda p: p.stat().st_mtime)
        print(f"compare's KL heatmaps: {[str(p) for p in sorted(newest.glob('kl_heatmap_*.png'))]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
