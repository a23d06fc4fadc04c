"""The cache-path control's figures (`--cache-check`, evals/run/cache_check.py, evals/compare/cache_path.py):

1. the verdict against a vLLM-shaped fake whose prefix cache corrupts answers (tests/runners/
   fake_prefix_cache.py): a nested niah run, 1K and 2K x 0:100:50 x 2 seeds, every servable request checked;
2. the healthy control's share of the run's computed prefill (`--dry-run`'s own figures): a small grid and the
   nightly suite's layout, computed from the plan (nothing sent);
3. the decision rule's error rates over many seeds: a healthy engine whose close greedy answers flip between
   cached and cold at a given rate, either way (called faulty: a false alarm), and a corrupting engine that
   makes a share of its cached answers wrong (missed), at the nightly's number of checks.

    python benchmarks/bench_cache_check.py [--trials 20000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: tests.runners.fake_prefix_cache

import ctxprobe  # noqa: E402
from ctxprobe.evals.compare.cache_path import ALPHA, sign_test_p  # noqa: E402


def fake_verdict() -> None:
    from ctxprobe.evals.cli.main import main
    from tests.runners.fake_prefix_cache import CorruptingPrefixCache

    with tempfile.TemporaryDirectory() as tmp, CorruptingPrefixCache() as fake:
        code = main(
            [
                "run",
                "--endpoint",
                fake.url,
                "--family",
                "niah",
                "--lengths",
                "1k,2k",
                "--depths",
                "0:100:50",
                "--samples",
                "2",
                "--layout",
                "nested",
                "--cache-check",
                "1",
                "--quiet",
                "--no-report",
                "--results-dir",
                tmp,
            ]
        )
        manifest = json.loads(next(Path(tmp).iterdir()).joinpath("manifest.json").read_text())
    c = manifest["cache_check"]
    print(
        f"corrupting fake: exit {code}, verdict {c['verdict']}, {c['differed']} of {c['checked']} differed "
        f"({c['cold_right_cached_wrong']} right only cold), p={c['p_value']:.3g}"
    )


def shares() -> None:
    for name, kwargs in (
        (
            "1K,2K x 0:100:25 x 160 seeds",
            dict(family="niah", lengths="1k,2k", depths="0:100:25", samples=160, layout="nested"),
        ),
        ("nightly suite", dict(suite="nightly")),
    ):
        est = ctxprobe.estimate(prefill_rate=50_000.0, token_counter="estimate:4", **kwargs)
        share = est.cache_check_tokens / est.computed_prefill if est.computed_prefill else 0.0
        print(
            f"healthy control, {name}: {est.cache_check_requests} cold re-sends, {est.cache_check_tokens:,} tokens "
            f"= {share:.2%} of {est.computed_prefill:,} computed prefill tokens (of {est.prompt_tokens:,} sent)"
        )


def error_rates(trials: int, checks: int) -> None:
    rng = random.Random(0)
    accuracy = 0.6  # a cached answer's chance of being right on a healthy engine
    for flip in (0.02, 0.05, 0.10):  # a healthy engine: each check's answer flips with this chance, either way
        alarms = 0
        for _ in range(trials):
            cold_only = cached_only = 0
            for _ in range(checks):
                if rng.random() < flip:
                    if rng.random() < accuracy:
                        cached_only += 1
                    else:
                        cold_only += 1
            alarms += sign_test_p(cold_only, cached_only) < ALPHA
        print(f"healthy engine, greedy flips {flip:.0%}, {checks} checks: called faulty {alarms / trials:.3%}")
    for corrupt in (0.25, 0.5, 1.0):  # a corrupting cache: this share of cached answers made wrong
        missed = 0
        for _ in range(trials):
            cold_only = sum(1 for _ in range(checks) if rng.random() < accuracy and rng.random() < corrupt)
            missed += sign_test_p(cold_only, 0) >= ALPHA
        print(
            f"corrupting engine, {corrupt:.0%} of cached answers wrong, {checks} checks: missed {missed / trials:.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--checks", type=int, default=8)
    args = parser.parse_args()
    fake_verdict()
    shares()
    error_rates(args.trials, args.checks)


if __name__ == "__main__":
    main()
