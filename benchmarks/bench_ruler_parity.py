"""RULER parity on the real embedded engine: lm-eval's own RULER `niah_single_1` (or `ruler_vt`, `--task vt`)
against ctxprobe's `niah` single (or `multihop` vartrack, 4 hops, one chain) with `template: ruler` (and
`length_convention: ruler`, haystack `noise:ruler`) and with ctxprobe's own template, at 1K/2K/4K. Prints each accuracy with its Wilson 95% interval; ctxprobe's two layouts run
with identical needles, so their paired difference is printed too (exact McNemar).

Needs lm-eval[api,ruler] 0.4.13, transformers (no torch) and gguf, for RULER's tokenizer folder, built from
the packaged GGUF's vocabulary (tests/evals/fixtures/lmeval_ruler/capture_ruler_log.py). No network.

    python benchmarks/bench_ruler_parity.py --docs 12 [--task vt]
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ctxprobe.evals.paired.templates import template_rows
from ctxprobe.evals.log.load import load_run
from ctxprobe.evals.stats import wilson
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.tasks.token_counter import packaged_gguf

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (1024, 2048, 4096)
RULER_DOCS_PER_LENGTH = 500  # niah_utils and vt_utils generate 500 docs per length, in length order
# --task: lm-eval's task, and ctxprobe's family and parameters for it
TASKS = {
    "niah_single_1": ("niah_single_1", "niah", "length_convention=ruler"),
    "vt": ("ruler_vt", "multihop", "kind=vartrack,hops=4,chains=0,length_convention=ruler"),
}


def interval(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]" if n else "-"


def ruler_lm_eval(engine: EmbeddedEngine, out: Path, docs: int, task: str) -> dict[int, tuple[int, int]]:
    sys.path.insert(0, str(ROOT / "tests" / "evals" / "fixtures" / "lmeval_ruler"))
    from capture_ruler_log import gguf_tokenizer_folder

    tokenizer = gguf_tokenizer_folder(packaged_gguf(), out / "tokenizer")
    picks = [i * RULER_DOCS_PER_LENGTH + j for i in range(len(LENGTHS)) for j in range(docs)]
    args = (f"model={engine.model_alias},base_url={engine.base_url}/v1/completions,tokenizer_backend=None,"
            f"tokenized_requests=False,tokenizer={tokenizer},num_concurrent=1")
    cmd = ["lm_eval", "run", "--tasks", task, "--model", "local-completions", "--model_args", args,
           "--metadata", json.dumps({"max_seq_lengths": list(LENGTHS)}),
           "--samples", json.dumps({task: picks}), "--log_samples", "--output_path", str(out / "lm")]
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    scores: dict[int, tuple[int, int]] = {}
    for path in glob.glob(str(out / "lm" / "**" / f"samples_{task}_*.jsonl"), recursive=True):
        for line in Path(path).read_text().splitlines():
            row = json.loads(line)
            length = int(row["doc"]["max_length"])
            k, n = scores.get(length, (0, 0))
            scores[length] = (k + int(row[str(length)] >= 1.0), n + 1)
    return scores


def ctxprobe_runs(engine: EmbeddedEngine, out: Path, docs: int, family: str, params: str) -> Path:
    step = 100 / max(docs - 1, 1)
    depths = ",".join(f"{i * step:.1f}" for i in range(docs))
    cmd = [sys.executable, "-m", "ctxprobe.evals.cli", "run", "--endpoint", engine.base_url, "--mode", "completions",
           "--token-counter", "local:gemma3-270m", "--family", family, "--params", params,
           "--templates", "ctxprobe,ruler", "--haystack", "noise:ruler", "--lengths", "1k,2k,4k", "--depths", depths,
           "--samples", "1", "--quiet", "--allow-errors", "--results-dir", str(out / "ctxprobe")]
    print("$ ctxprobe " + " ".join(cmd[3:]), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return next((out / "ctxprobe").iterdir())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=12, help="samples per length for each of the three")
    ap.add_argument("--task", choices=sorted(TASKS), default="niah_single_1", help="RULER's task to compare")
    ap.add_argument("--out", type=Path, default=None, help="keep the logs and the ctxprobe run here "
                    "(default: a temporary folder, removed at the end)")
    args = ap.parse_args()
    lm_task, family, params = TASKS[args.task]
    with tempfile.TemporaryDirectory() as tmp, EmbeddedEngine(n_ctx=max(LENGTHS) + 512) as engine:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        ruler = ruler_lm_eval(engine, out, args.docs, lm_task)
        run = load_run(ctxprobe_runs(engine, out, args.docs, family, params))
    by_layout: dict[tuple[str, int], tuple[int, int]] = {}
    for record in run.records:
        key = (str(record.sample.recipe.params["template"]), record.sample.recipe.context_tokens)
        k, n = by_layout.get(key, (0, 0))
        scored = record.score is not None
        by_layout[key] = (k + int(scored and record.score.correct), n + int(scored))  # type: ignore[union-attr]
    prompt = {}
    for record in run.records:
        if record.response is not None and record.response.prompt_tokens:
            prompt.setdefault((str(record.sample.recipe.params["template"]), record.sample.recipe.context_tokens),
                              []).append(record.response.prompt_tokens)
    print(f"{'length':>6}  {'lm-eval RULER ' + lm_task:>28}  {'ctxprobe template: ruler':>28}  "
          f"{'ctxprobe own template':>28}")
    for length in LENGTHS:
        tokens = {t: sum(v) // len(v) for (t, n), v in prompt.items() if n == length and v}
        print(f"{length:>6}  {interval(*ruler.get(length, (0, 0))):>28}  "
              f"{interval(*by_layout.get(('ruler', length), (0, 0))):>28}  "
              f"{interval(*by_layout.get(('ctxprobe', length), (0, 0))):>28}   mean prompt tokens: "
              f"ruler {tokens.get('ruler', '-')}, ctxprobe {tokens.get('ctxprobe', '-')}")
    for record in run.records:
        if record.error is not None:
            recipe = record.sample.recipe
            print(f"error ({recipe.params['template']} layout, {recipe.context_tokens}, depth {recipe.depth}): "
                  f"{record.error.value}: {record.error_detail}")
    if args.out:
        print(f"logs and the ctxprobe run: {out}")
    for row in template_rows(run.records):
        print(f"paired, ruler - ctxprobe layout, {row.context_tokens}: {row.diff:+.2f} "
              f"[{row.diff_lo:+.2f}, {row.diff_hi:+.2f}], exact McNemar p = {row.p_value:.3g} (n = {row.n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
