"""RULER parity on the real embedded engine: lm-eval's own RULER task against ctxprobe's counterpart (the
`ruler` suite's task) with `template: ruler` and `length_convention: ruler`, and with ctxprobe's own
template, at 1K/2K/4K. `--task` is any of RULER's tasks that need no download: `niah_single_1`,
`niah_multikey_2`, `niah_multikey_3`, `vt`, `cwe`, `fwe` (or `all`); RULER's essay tasks read Paul Graham's
essays from the hub and its QA tasks download SQuAD and HotpotQA, so they are not run here. Prints each
accuracy with its Clopper-Pearson 95% interval; ctxprobe's two layouts run with identical needles, so their paired
difference is printed too (exact McNemar).

Needs lm-eval[api,ruler] 0.4.13, transformers (no torch) and gguf, for RULER's tokenizer folder, built from
the packaged GGUF's vocabulary (tests/evals/fixtures/lmeval_ruler/capture_ruler_log.py). No network.

    python benchmarks/bench_ruler_parity.py --docs 12 [--task vt|all] [--lengths 1k,2k] [--own-template]

The same design on both sides: RULER draws each doc's needle depth at random and gives each doc a
haystack of its own; for niah, ctxprobe runs one sample per RULER doc, at that doc's depth (read from the
needle's line), each with a seed of its own (its own haystack window: a `needle` haystack's distractors
come from it). `--sweep` runs ctxprobe's even depth sweep at one seed instead.

Both sides talk to one embedded engine, started once for every task; lm-eval's tokenizer folder is built
once, and a log already in `--out` is read again rather than re-run. `--threads 1` suits a machine whose cores other work also uses (llama.cpp's threads wait on each
other by spinning: on 2 busy cores, one thread decoded 4x faster than two).
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ctxprobe.evals.compare.paired.templates import template_rows
from ctxprobe.evals.compare.stats import clopper_pearson
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.token_counter import packaged_gguf

ROOT = Path(__file__).resolve().parents[1]
LENGTH_NAMES = {"1k": 1024, "2k": 2048, "4k": 4096}
RULER_DEPTHS = sorted({round(i * 100 / 39) for i in range(40)})  # np.round(np.linspace(0, 100, 40))
RULER_DOCS_PER_LENGTH = 500  # niah_utils and vt_utils generate 500 docs per length, in length order
# --task: lm-eval's task, and ctxprobe's family, parameters and haystack for it (None: no depth sweep)
TASKS = {
    "niah_single_1": ("niah_single_1", "niah", "length_convention=ruler", "noise:ruler"),
    "niah_multikey_2": ("niah_multikey_2", "niah", "length_convention=ruler", "needle"),
    "niah_multikey_3": (
        "niah_multikey_3",
        "niah",
        "key_kind=uuid,value_kind=uuid,length_convention=ruler",
        "needle:uuid",
    ),
    "vt": ("ruler_vt", "multihop", "kind=vartrack,hops=4,chains=0,length_convention=ruler", "noise:ruler"),
    "cwe": ("ruler_cwe", "aggregate", "kind=common_words,length_convention=ruler", None),
    "fwe": ("ruler_fwe", "aggregate", "kind=frequent_words,length_convention=ruler", None),
}


def interval(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]" if n else "-"


def ruler_tokenizer(out: Path) -> Path:
    """RULER's tokenizer folder, built from the packaged GGUF's vocabulary (once per bench)."""
    sys.path.insert(0, str(ROOT / "tests" / "evals" / "fixtures" / "lmeval_ruler"))
    from capture_ruler_log import gguf_tokenizer_folder

    return gguf_tokenizer_folder(packaged_gguf(), out / "tokenizer")


def needle_depth(doc: dict[str, Any]) -> int | None:
    """The depth (one of RULER's 40) RULER put a doc's first answer at (it draws one at random for each
    doc): RULER inserts the needle before unit int(N * depth / 100) of the N haystack units (lines, for the
    haystacks run here), so the needle's line gives the depth to within a line's share of the context;
    None for a task without a needle."""
    text = doc["input"]
    lines = text[text.index("\n") + 1 : text.rindex("\n")].split("\n")  # between instruction and question
    at = next((i for i, line in enumerate(lines) if doc["outputs"][0] in line), None)
    if at is None:  # a task without a needle (cwe, fwe, qa): no depth
        return None
    units = len(lines) - 1
    exact = [depth for depth in RULER_DEPTHS if int(units * depth / 100) == at]
    return exact[len(exact) // 2] if exact else min(RULER_DEPTHS, key=lambda depth: abs(depth - at / units * 100))


def ruler_lm_eval(
    engine: EmbeddedEngine, tokenizer: Path, out: Path, docs: int, task: str, lengths: tuple[int, ...]
) -> tuple[dict[int, tuple[int, int]], dict[int, Counter[int]]]:
    """RULER's score (k of n) at each length, and how many of its docs put the needle at each depth."""
    picks = [i * RULER_DOCS_PER_LENGTH + j for i in range(len(lengths)) for j in range(docs)]
    args = (
        f"model={engine.model_alias},base_url={engine.base_url}/v1/completions,tokenizer_backend=None,"
        f"tokenized_requests=False,tokenizer={tokenizer},num_concurrent=1"
    )
    cmd = [
        "lm_eval",
        "run",
        "--tasks",
        task,
        "--model",
        "local-completions",
        "--model_args",
        args,
        "--metadata",
        json.dumps({"max_seq_lengths": list(lengths)}),
        "--samples",
        json.dumps({task: picks}),
        "--log_samples",
        "--output_path",
        str(out / "lm"),
    ]
    logs = glob.glob(str(out / "lm" / "**" / f"samples_{task}_*.jsonl"), recursive=True)
    if not logs:  # a log kept in --out from an earlier run of the same docs is read again
        print("$ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    scores: dict[int, tuple[int, int]] = {}
    depths: dict[int, Counter[int]] = {}
    for path in glob.glob(str(out / "lm" / "**" / f"samples_{task}_*.jsonl"), recursive=True):
        for line in Path(path).read_text().splitlines():
            row = json.loads(line)
            length = int(row["doc"]["max_length"])
            k, n = scores.get(length, (0, 0))
            scores[length] = (k + int(row[str(length)] >= 1.0), n + 1)
            depth = needle_depth(row["doc"])
            if depth is not None:
                depths.setdefault(length, Counter())[depth] += 1
    return scores, depths


def ctxprobe_records(
    engine: EmbeddedEngine,
    out: Path,
    docs: int,
    family: str,
    params: str,
    haystack: str | None,
    lengths: tuple[int, ...],
    templates: str,
    at: dict[int, Counter[int]] | None,
) -> list[SampleRecord]:
    """ctxprobe's samples. With `at` (niah): one per RULER doc, at its depth, each with a seed of its own,
    so that each has its own haystack window as each RULER doc has its own haystack (a `needle` haystack's
    distractors come from the window: samples of one seed share them). Else one run: an even sweep of
    `docs` depths at one seed, or `docs` samples at 50 % for a task without depth."""
    if haystack and at:
        slots = [
            (length, depth, seed)
            for length in lengths
            for seed, depth in enumerate(sorted(at.get(length, Counter()).elements()))
        ]
        return [
            r
            for length, depth, seed in slots
            for r in ctxprobe_run(engine, out, family, params, haystack, (length,), templates, str(depth), 1, seed)
        ]
    step = 100 / max(docs - 1, 1)
    depths, samples = (",".join(f"{i * step:.1f}" for i in range(docs)), 1) if haystack else ("50", docs)
    return ctxprobe_run(engine, out, family, params, haystack, lengths, templates, depths, samples, 0)


def ctxprobe_run(
    engine: EmbeddedEngine,
    out: Path,
    family: str,
    params: str,
    haystack: str | None,
    lengths: tuple[int, ...],
    templates: str,
    depths: str,
    samples: int,
    seed: int,
) -> list[SampleRecord]:
    results = out / f"ctxprobe-{family}-{len(list(out.glob('ctxprobe-*')))}"
    cmd = [
        sys.executable,
        "-m",
        "ctxprobe.evals.cli.main",
        "run",
        "--endpoint",
        engine.base_url,
        "--mode",
        "completions",
        "--token-counter",
        "local:gemma3-270m",
        "--family",
        family,
        "--params",
        params,
        "--templates",
        templates,
        "--haystack",
        haystack or "prose",
        "--lengths",
        ",".join(f"{n // 1024}k" for n in lengths),
        "--seed",
        str(seed),
        "--depths",
        depths,
        "--samples",
        str(samples),
        "--quiet",
        "--allow-errors",
        "--no-report",
        "--results-dir",
        str(results),
    ]
    print("$ ctxprobe " + " ".join(cmd[3:]), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return list(load_run(next(results.iterdir())).records)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=12, help="samples per length for each of the three")
    ap.add_argument("--task", choices=[*sorted(TASKS), "all"], default="niah_single_1", help="RULER's task to compare")
    ap.add_argument("--lengths", default="1k,2k,4k", help="any of 1k, 2k, 4k, comma-separated")
    ap.add_argument(
        "--own-template",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run ctxprobe's own template (a third column; --no-own-template skips it)",
    )
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="niah: ctxprobe at an even depth sweep, not at the depths RULER drew for its docs",
    )
    ap.add_argument("--threads", type=int, default=None, help="the engine's CPU threads (default: llama.cpp's)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="keep the logs and the ctxprobe run here (default: a temporary folder, removed at the end)",
    )
    args = ap.parse_args()
    lengths = tuple(sorted(LENGTH_NAMES[name.strip()] for name in args.lengths.split(",")))
    templates = "ctxprobe,ruler" if args.own_template else "ruler"
    engine_kw = {"threads": args.threads} if args.threads else {}
    with tempfile.TemporaryDirectory() as tmp, EmbeddedEngine(n_ctx=max(lengths) + 512, **engine_kw) as engine:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        tokenizer = ruler_tokenizer(out)
        for task in sorted(TASKS) if args.task == "all" else [args.task]:
            lm_task, family, params, haystack = TASKS[task]
            (out / task).mkdir(parents=True, exist_ok=True)
            ruler, at = ruler_lm_eval(engine, tokenizer, out / task, args.docs, lm_task, lengths)
            at = at if family == "niah" and not args.sweep else None
            records = ctxprobe_records(engine, out / task, args.docs, family, params, haystack, lengths, templates, at)
            if at:
                print(
                    "depths of RULER's docs: "
                    + "; ".join(
                        f"{n}: " + ", ".join(f"{d}x{c}" if c > 1 else str(d) for d, c in sorted(at[n].items()))
                        for n in lengths
                        if n in at
                    )
                )
            table(lm_task, ruler, records, lengths)
        if args.out:
            print(f"logs and the ctxprobe runs: {out}")
    return 0


def table(
    lm_task: str, ruler: dict[int, tuple[int, int]], records: list[SampleRecord], lengths: tuple[int, ...]
) -> None:
    by_layout: dict[tuple[str, int], tuple[int, int]] = {}
    for record in records:
        key = (str(record.sample.recipe.params["template"]), record.sample.recipe.context_tokens)
        k, n = by_layout.get(key, (0, 0))
        scored = record.score is not None
        by_layout[key] = (k + int(scored and record.score.correct), n + int(scored))  # type: ignore[union-attr]
    prompt = {}
    for record in records:
        if record.response is not None and record.response.prompt_tokens:
            prompt.setdefault(
                (str(record.sample.recipe.params["template"]), record.sample.recipe.context_tokens), []
            ).append(record.response.prompt_tokens)
    print(
        f"{'length':>6}  {'lm-eval RULER ' + lm_task:>28}  {'ctxprobe template: ruler':>28}  "
        f"{'ctxprobe own template':>28}"
    )
    for length in lengths:
        tokens = {t: sum(v) // len(v) for (t, n), v in prompt.items() if n == length and v}
        print(
            f"{length:>6}  {interval(*ruler.get(length, (0, 0))):>28}  "
            f"{interval(*by_layout.get(('ruler', length), (0, 0))):>28}  "
            f"{interval(*by_layout.get(('ctxprobe', length), (0, 0))):>28}   mean prompt tokens: "
            f"ruler {tokens.get('ruler', '-')}, ctxprobe {tokens.get('ctxprobe', '-')}"
        )
    for record in records:
        if record.error is not None:
            recipe = record.sample.recipe
            print(
                f"error ({recipe.params['template']} layout, {recipe.context_tokens}, depth {recipe.depth}): "
                f"{record.error.value}: {record.error_detail}"
            )
    for row in template_rows(records):
        print(
            f"paired, ruler - ctxprobe layout, {row.context_tokens}: {row.diff:+.2f} "
            f"[{row.diff_lo:+.2f}, {row.diff_hi:+.2f}], exact McNemar p = {row.p_value:.3g} (n = {row.n})"
        )
    print(flush=True)


if __name__ == "__main__":
    sys.exit(main())
