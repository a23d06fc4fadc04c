"""The paired sequential gate replayed over differences known in advance: what `run --against` does round
after round (`open_rows` says which lengths of a family go out, `decide` judges every row after each round),
with the pairs taken from an array instead of an endpoint. The benchmark of the nightly gate and the gate's
error-rate simulations both drive the gate through here, so they measure the rules the run applies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ctxprobe.evals.compare.confseq import PairedTally
from ctxprobe.evals.compare.sequential.betting import PairedValues
from ctxprobe.evals.compare.sequential.gate import (
    PassRule,
    SequentialRow,
    Verdict,
    decide,
    final_verdicts,
    gate_verdict,
    open_rows,
)


@dataclass(frozen=True)
class Replay:
    """A replayed gate: its verdict, each family's rows (pooled first, then one per length) with their
    verdicts, and the depth sweeps (rounds) sent per length."""

    verdict: Verdict
    rows: list[list[SequentialRow]]
    verdicts: list[Verdict]
    sent: np.ndarray


def replay_gate(
    diff: np.ndarray,
    margin: float,
    alpha: float,
    continuous: bool = False,
    pass_rule: PassRule = "each",
    new_row: Callable[[bool], SequentialRow] | None = None,
) -> Replay:
    """`diff`: (family, length, round, pair) paired differences: -1, 0 or 1 (correctness) or, with
    `continuous`, values in [-1, 1] (answer probabilities). Each round sends the open lengths' pairs.
    `new_row(primary)` makes the rows where they are of another kind (`kl_gate.kl_row`: scaled KL in [-1, 0])."""
    families, n_lengths, rounds = diff.shape[:3]
    make = new_row or (lambda primary: SequentialRow(primary=primary, tally=_empty(continuous)))
    rows = [[make(True)] + [make(False) for _ in range(n_lengths)] for _ in range(families)]
    flat = [r for fam in rows for r in fam]
    sent = np.zeros(n_lengths)
    for k in range(rounds):
        wanted = [open_rows(rows[f], margin) for f in range(families)]
        if not any(any(w) for w in wanted):
            break
        for f in range(families):
            send = [i for i in range(n_lengths) if wanted[f][1 + i]]
            for i in send:
                rows[f][1 + i].add_diffs(diff[f, i, k].tolist(), margin)
                sent[i] += 1
            if wanted[f][0]:
                rows[f][0].add_diffs(diff[f, :, k].ravel().tolist(), margin)
        decide(flat, margin, alpha, pass_rule=pass_rule)
    verdicts = final_verdicts(flat, margin, alpha, pass_rule)
    return Replay(gate_verdict(flat, verdicts), rows, verdicts, sent)


def _empty(continuous: bool) -> PairedTally | PairedValues:
    return PairedValues() if continuous else PairedTally(0, 0, 0)
