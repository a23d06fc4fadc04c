"""How much of the exact KL the top-k estimator of KL at depth (`evals.paired.topk_kl`) recovers, at known
truth (in-process, no engine): distributions shaped like a language model's at an answer position (a
vocabulary of 32,000 with Gumbel logits and one answer token lifted by 2 to 12 nats, so the model is sure to
a varying degree) against the same logits with Gaussian noise of scale `--sigma` (a light and a heavy
quantisation), each side's top-k listed as an engine would. The estimator is a lower bound, so the share is
at most 100 %; what matters for a heatmap is that it keeps the builds apart.

Printed: per noise level, the mean exact KL and, per k, the mean estimate and its share of the exact mean.

    python benchmarks/bench_topk_kl.py [--vocab 32000] [--positions 100] [--sigma 0.05 0.3] [--k 1 5 10 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ctxprobe.evals.compare.paired.topk_kl import Side, topk_kl


def listed(dist: np.ndarray, k: int) -> Side:
    top = np.argsort(-dist)[:k]
    return Side(known={int(i): float(dist[i]) for i in top}, kth=float(dist[top[-1]]))


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max())
    return e / e.sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--sigma", type=float, nargs="+", default=[0.05, 0.3])
    parser.add_argument("--k", type=int, nargs="+", default=[1, 5, 10, 20])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for sigma in args.sigma:
        exact, bound = [], {k: [] for k in args.k}
        for _ in range(args.positions):
            logits = rng.gumbel(0.0, 1.5, args.vocab)
            logits[rng.integers(args.vocab)] += rng.uniform(2.0, 12.0)
            p, q = softmax(logits), softmax(logits + rng.normal(0.0, sigma, args.vocab))
            exact.append(float(np.sum(p * np.log(p / q))))
            for k in args.k:
                bound[k].append(topk_kl(listed(p, k), listed(q, k)))
        shares = ", ".join(f"k={k} {np.mean(v):.3g} ({np.mean(v) / np.mean(exact):.0%})" for k, v in bound.items())
        print(f"noise sigma {sigma}: exact KL {np.mean(exact):.3g} nats; top-k estimate (share of exact): {shares}")
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
