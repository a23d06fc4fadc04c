"""Hand-built runs whose records carry answer log-probabilities: the synthetic compare grid
(`tests.evals.compare.synthetic`), each record with a gold answer of a few tokens and a top-k list per
position drawn from a small vocabulary, so a test knows the distributions behind them."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.runners.response import AnswerLogprobs, TokenLogprob
from ctxprobe.tasks.suite import Suite, SuiteTask
from tests.evals.compare.synthetic import DEPTHS, Key, grid, record

VOCAB = 8
GOLD = [3, 1, 4]  # token ids of the gold answer


def answer_logprobs(dists: list[np.ndarray], k: int, gold: list[int] = GOLD) -> AnswerLogprobs:
    """One record's logprobs from its true distributions (one per gold position), top-k of each."""
    top = []
    for dist in dists:
        order = np.argsort(-dist, kind="stable")[:k]
        top.append([TokenLogprob(token=f"t{i}", logprob=math.log(dist[i]), id=int(i)) for i in order])
    return AnswerLogprobs(
        gold=" 314",
        token_ids=gold,
        logprobs=[math.log(d[g]) for d, g in zip(dists, gold)],
        top=top,
        greedy=[int(np.argmax(d)) == g for d, g in zip(dists, gold)],
        method="generated",
    )


def base_dists(key: Key) -> list[np.ndarray]:
    """The baseline's distribution at each gold position of the sample at `key` (seeded by the key)."""
    length, depth, seed = key
    rng = np.random.default_rng([length, int(depth), seed])
    out = []
    for g in GOLD:
        logits = rng.normal(0.0, 1.0, VOCAB)
        logits[g] += 3.0
        out.append(np.exp(logits) / np.exp(logits).sum())
    return out


def shifted(dists: list[np.ndarray], amount: float, key: Key) -> list[np.ndarray]:
    """The same distributions with logit noise of scale `amount` (a worse build: more at larger amounts)."""
    length, depth, seed = key
    rng = np.random.default_rng([length, int(depth), seed, 99])
    out = []
    for dist in dists:
        logits = np.log(dist) + rng.normal(0.0, amount, VOCAB)
        out.append(np.exp(logits) / np.exp(logits).sum())
    return out


LogprobsOf = Callable[[Key], AnswerLogprobs | str | None]


def write_logprob_run(
    path: Path, label: str, logprobs_of: LogprobsOf, keys: list[Key] | None = None, tokenizer: str = "estimate:4"
) -> Path:
    """A finished run at `path`, every record right, with `logprobs_of(key)` as its logprobs."""
    keys = keys if keys is not None else grid()
    store = RunStore(path)
    manifest = RunManifest(
        label=label,
        created=1.0,
        status="finished",
        tokenizer=tokenizer,  # type: ignore[arg-type]
        suite=Suite(
            name="quick", lengths=sorted({k[0] for k in keys}), depths=list(DEPTHS), tasks=[SuiteTask(family="niah")]
        ),
    )
    store.write_manifest(manifest)
    for key in keys:
        rec: SampleRecord = record(key, True, tokenizer=tokenizer)
        store.append(rec.model_copy(update={"logprobs": logprobs_of(key)}))
    store.close()
    return path
