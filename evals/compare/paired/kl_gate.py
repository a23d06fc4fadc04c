"""The paired gate on divergence (`--metric kl`): each pair's KL at the answer positions (`evals.paired.kl`,
`pair_kl`: the least KL(base || cand) the two top-k lists allow, averaged over the gold answer's positions) judged
against a margin in nats. It asks whether the candidate's answer distributions are the baseline's, not
whether it loses answers: damage that moves the answer's probability both ways (a KV-cache quantisation's,
say) shows here where a difference of `p_answer` averages it away, and the llama.cpp community reads quants
the same way (`llama-perplexity --kl-divergence`).

- FAIL: the mean KL is above the margin (betting e-process against "mean KL <= margin", weighted Holm over
  the rows as every FAIL is).
- PASS: the mean KL is below the margin (against "mean KL >= margin", each row at the full alpha).

The betting needs values bounded a priori, and KL is not (a position can give 23 nats: `PROB_FLOOR`). Each
pair's KL is counted up to `CAP_TIMES` margins: min(KL, cap), then scaled to [-1, 0] (a loss: -min(KL, cap)
/ cap, so the gate's "drop beyond the margin" reads "divergence beyond the margin" and every rule of
`evals.sequential.gate` applies unchanged, with margin 1 / CAP_TIMES). What that changes in each verdict:
- FAIL stays a claim about the true mean: min(KL, cap) <= KL, so "the capped mean is above the margin"
  implies "the mean is". Capping only ever costs FAIL pairs.
- PASS is a claim about the capped mean: below the margin, which also bounds the share of pairs whose KL
  passes the cap, by Markov's inequality, to under 1 / CAP_TIMES. A build that breaks a few answers outright
  can PASS here; that is what the correctness gate (the default metric, shown beside) is for.
The cap is what makes PASS reachable: the largest safe bet against "mean >= margin" is 1 / (cap - margin),
so with no cap at all no finite number of pairs would do. At 10 margins an equal build (KL a fifth of the
margin) PASSes in about 60 pairs (simulated; 60 on the real engine); a divergence of 4 margins FAILs in about 10."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ctxprobe.evals.compare.sequential.betting import PairedValues
from ctxprobe.evals.compare.sequential.gate import SequentialRow, Verdict, final_verdicts

# The default margin follows from the noise floor the cache-path control measures (`--cache-check`,
# `evals.compare.cache_path`): the largest KL(cached || cold) of one check on a healthy engine, the same prompt
# read through two cache paths, the least that two builds computing the same thing drift apart. The margin is
# `FLOOR_TIMES` floors: an equal build (the window-vs-full SWA cache: 0.0041 nats a pair at 1K-4K, 1.3 floors)
# sits under a third of it, and a KV-cache quantisation (q4_0: 0.037 nats at 1K-2K, 12 floors) above it.
# `CACHE_PATH_FLOOR` in nats: the largest of 9 checks on Gemma 3 270M (embedded engine, 1K-4K, full and window
# SWA cache: 0.00312), rounded up (docs/ENGINES.md, "Cache path"); vLLM's (SmolLM2, 3 checks) was 0.00092.
CACHE_PATH_FLOOR = 0.0032
FLOOR_TIMES = 5.0


def margin_for_floor(floor: float) -> float:
    """The default KL margin in nats for a cache-path noise floor in nats: `FLOOR_TIMES` floors."""
    if not 0.0 < floor < 1e3:
        raise ValueError(f"a noise floor must be a positive number of nats, got {floor}")
    return round(FLOOR_TIMES * floor, 6)


KL_MARGIN = margin_for_floor(CACHE_PATH_FLOOR)
CAP_TIMES = 10.0  # a pair's KL counts up to this many margins
ROW_MARGIN = 1.0 / CAP_TIMES  # the margin in the rows' scaled units
KL_GATE_METHOD = (
    f"KL at the answer positions, each pair's counted up to {CAP_TIMES:g} margins; anytime-valid "
    "betting e-values; FAIL: mean KL above the margin, weighted Holm over the rows; PASS: the capped "
    "mean below it, each row at the full alpha"
)


GateMetric = Literal["correct", "p_answer", "kl"]


def metric_option(use: str, kl_note: str) -> Any:
    """The `--metric` option of a command that gates (`use`: when it applies; `kl_note`: what kl does there),
    declared once for compare, history and run --against."""
    return Field(
        "correct",
        description=f"{use}what the gate judges: correct (exact-match accuracy, the default), "
        "p_answer (the answer's probability, the margin in probability points) or kl (the KL of the "
        f"candidate's answer distributions from the baseline's{kl_note}); the last two need answer "
        "log-probabilities, --logprobs, on both runs",
    )


def margin_option(use: str) -> Any:
    """The `--kl-margin` option (`use`: when it applies)."""
    return Field(
        KL_MARGIN,
        gt=0,
        lt=1000,
        description=f"{use}: the mean KL in nats a row FAILs above and PASSes "
        f"below (each pair's KL counted up to {CAP_TIMES:g} margins)",
    )


def check_margin(margin: float) -> float:
    """The KL margin in nats, if it is one (positive and finite); a ValueError naming it if not."""
    if not 0.0 < margin < 1e3:
        raise ValueError(f"--kl-margin must be a positive number of nats, got {margin}")
    return margin


def floor_warning(label: str, floor: float | None, margin: float) -> str | None:
    """A warning where a run's own cache-path control measured a noise floor (`floor`: its largest KL per
    check, None when it measured none) whose margin (`margin_for_floor`) is above `margin`: an equal build of
    that engine may drift past the margin, and then never PASS."""
    if floor is None or floor <= 0.0 or margin_for_floor(floor) <= margin:
        return None
    return (
        f"NOISE FLOOR: {label}'s cache-path control measured KL up to {floor:.3g} nats per check; "
        f"--kl-margin {margin:g} is below {FLOOR_TIMES:g} such floors ({margin_for_floor(floor):.3g} nats), "
        "so an equal build of this engine may not PASS"
    )


def scaled(kl: float, margin: float) -> float:
    """A pair's KL as the gate bets on it: -min(KL, cap) / cap, in [-1, 0]."""
    cap = CAP_TIMES * margin
    return -min(max(kl, 0.0), cap) / cap


def in_nats(value: float, margin: float) -> float:
    """A scaled mean (or bound) back in nats of capped KL."""
    return -value * CAP_TIMES * margin


def nats_interval(lo: float, hi: float, margin: float) -> tuple[float, float]:
    """A scaled interval as an interval of capped KL in nats (the bounds swap: a larger loss is more KL)."""
    return in_nats(hi, margin), in_nats(lo, margin)


def kl_row(primary: bool) -> SequentialRow:
    """A gate row of scaled KL values: bounded in [-1, 0], FAIL against "at most the margin"."""
    return SequentialRow(primary=primary, tally=PairedValues(lo=-1.0, hi=0.0), fails_at_margin=True)


@dataclass(frozen=True)
class KLVerdict:
    """One row judged on its pairs' KL: the verdict, the capped mean's bounds in nats (each one-sided at
    alpha) and the anytime-valid p-values of both directions."""

    verdict: Verdict
    mean: float
    lo: float
    hi: float
    p_fail: float
    p_pass: float


def judge_rows(
    rows: Sequence[tuple[bool, Sequence[float]]],
    margin: float,
    alpha: float,
    chains: Sequence[Sequence[str]] | None = None,
) -> list[KLVerdict]:
    """Fixed rows (primary or not, their pairs' KL in nats) judged as a paired run judges its rows when its
    pairs end: FAIL on weighted Holm over all of them, PASS each at alpha. Betting e-values are anytime-valid,
    so this holds for runs that stopped adaptively too (a running maximum is never below the last value).
    `chains[i]`: row i's pairs' chains (`evals.compare.clusters`): each chain bets once, on its pairs' mean
    scaled KL (None: every pair its own chain)."""
    from ctxprobe.evals.compare.clusters import chain_means

    seq = []
    for i, (primary, kls) in enumerate(rows):
        row = kl_row(primary)
        values = [scaled(k, margin) for k in kls]
        if chains is not None:
            values = chain_means(values, chains[i])
        row.add_diffs(values, ROW_MARGIN)  # one look at every pair: the gate's own bets
        seq.append(row)
    out = []
    for row, verdict in zip(seq, final_verdicts(seq, ROW_MARGIN, alpha)):
        lo, hi = nats_interval(*row.interval(alpha), margin)
        out.append(
            KLVerdict(
                verdict=verdict,
                mean=in_nats(row.tally.mean, margin),
                lo=lo,
                hi=hi,
                p_fail=row.p_fail,
                p_pass=row.p_pass,
            )
        )
    return out
