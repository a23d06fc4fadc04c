"""The paired sequential gate: rows (each family pooled over its lengths, the primary test, and each
family x length, secondary) gather paired differences in rounds, and each is decided by anytime-valid
e-values, so the gate's error rates hold however early a row stops. A difference is a pair's correctness
(-1, 0, +1: `PairedTally`), its answer probability (in [-1, 1]: `PairedValues`) or a divergence from the
baseline scaled to [-1, 0] (KL at the answer positions: `evals.paired.kl_gate`); the rules are the same but
for one: a divergence row's FAIL is against "at most the margin" (`fails_at_margin`), since two builds that
are not bit-identical always diverge by a little, so "no divergence" is no null worth rejecting.

- FAIL: the candidate is worse than the baseline (the betting e-process against "no drop", delta >= 0,
  which only the discordant pairs move, as in McNemar's test, crosses its weighted-Holm level) and its mean
  difference is below -margin: the fixed gate's rule (significant, and a drop larger than the margin), made
  anytime-valid.
- PASS: the drop is confidently smaller than the margin (the betting e-process against delta <= -margin
  crosses 1/alpha). Each row's PASS is tested at the full alpha, on its own.
- UNDECIDED: neither, when the pairs run out.
- The gate: FAIL when any row FAILs; PASS when every primary (pooled family) row PASSes; else UNDECIDED.

Why the two directions are corrected differently, and the proof that each verdict errs at most alpha.
Write delta_r for row r's true mean difference, E_r for a row's e-process (`betting.py`: a nonnegative
supermartingale under its null, in the row's own pairs) and p_r = 1 / max_t E_r(t) its anytime-valid
p-value: P(p_r <= a) <= a for every a, whenever the row stops, because Ville's inequality bounds the maximum
over all time and a row that stops early (or is not sampled) only reads a smaller maximum. Which rows are
sampled next (`open_rows`) is chosen from past rounds only, so each row still sees its pairs in turn and its
e-process stays a supermartingale; a pooled row stops taking pairs once decided, so every round it counts
holds all of its family's lengths (the balanced rounds `betting.py` needs for rows whose pairs differ in
law).

1. P(false PASS) <= alpha (an intersection-union test, Berger 1982). The gate's PASS claims "no family's
   pooled difference is at or below -margin": the complement of the union of the nulls
   H_j: delta_j <= -margin over the primary rows j. If the claim is false, some H_j is true; the gate says
   PASS only if row j PASSes, i.e. p_j < alpha, so P(gate PASS) <= P(p_j < alpha) <= alpha. No share of
   alpha is given up however many families there are: rejecting a union needs every member rejected.
   What a row's PASS means on its own: that row's drop is under the margin at level alpha. It is not a
   simultaneous claim over rows: of many rows at the null's edge, about alpha of them PASS wrongly
   (secondary rows' PASSes are reported, never needed for the gate's PASS).
2. P(any false FAIL) <= alpha, over all rows at once. A FAIL rejects H'_r: delta_r >= 0 (no drop).
   Weighted Holm with weights w_r (summing to 1) rejects a true H'_t only in a step where the weight still in
   play is at least W_T, the weight of all true nulls (none of them is rejected before the first one is),
   and so only if p_t <= alpha w_t / W_T for some true t: by the union bound the chance is at most
   sum_t alpha w_t / W_T = alpha, for any dependence between rows (a pooled row and its lengths share
   pairs). Verdicts are taken as sampling goes and kept: the p-values only fall (running maxima), and Holm's
   adjustment is monotone in them, so every FAIL taken is also a rejection of Holm on the p-values at the
   end, and the bound holds for the set of FAILs the gate gave. FAIL's second condition (an observed mean
   below -margin) only removes FAILs. A divergence row (`fails_at_margin`) rejects H'_r: delta_r >= -margin
   instead: the same argument, with its own null.
   Why weighted Holm rather than a hierarchy (suite pooled row, then families, then lengths): the FAIL rule
   needs a mean below -margin, and a drop in one family of seven moves a suite row by a seventh of it, so a
   suite gatekeeper would stop exactly the drops the per-family rows exist to find; and passing on the full
   alpha to the families when only some of a level is rejected is not valid (each level's errors would
   add up), while passing it only when all are rejected (serial gatekeeping) never reaches one family's
   lengths. Holm keeps 80 % of the weight on the pooled rows, where a drop everywhere shows first.

A PASS row may still be worse than the baseline by less than the margin (a significant 1-point drop at a
5-point margin PASSes); a row whose true drop lies between 0 and the margin can FAIL more often than alpha
when its observed mean strays below -margin: the guarantee for FAIL is against "no drop", as the fixed
gate's is.

`pass_rule="holm"` is the earlier rule (PASS on the same weighted Holm as FAIL), kept so that the benchmark
can set the two side by side; it is valid but needs far more pairs to PASS."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxprobe.evals.compare.confseq import PairedTally, p_from_log_e
from ctxprobe.evals.compare.sequential.betting import (
    Evidence,
    PairedValues,
    betting_cs,
    log_e_below,
    log_e_fail,
    log_e_pass,
)
from ctxprobe.evals.compare.sequential.holm import PRIMARY_SHARE, row_weights, weighted_holm

Verdict = Literal["FAIL", "PASS", "UNDECIDED"]
PassRule = Literal["each", "holm"]
PASS_MEANING = (
    "A row's PASS holds at alpha on its own (its drop is under the margin); the gate PASSes when every "
    "pooled row does (an intersection-union test, no correction needed); FAIL is corrected over all rows."
)
GATE_METHOD = (
    "anytime-valid betting e-values (Waudby-Smith & Ramdas); FAIL: a drop significant against 0 "
    "and below -margin, weighted Holm over all rows (pooled family rows primary, "
    f"{PRIMARY_SHARE:.0%} of alpha); PASS: significantly above -margin, each row at the full alpha "
    "(the gate PASSes when every pooled row does: an intersection-union test)"
)


@dataclass
class SequentialRow:
    """One row's running evidence. `log_e_fail` / `log_e_pass` are running maxima (an e-process's maximum
    so far is what its anytime-valid p-value reads)."""

    primary: bool
    tally: Evidence = field(default_factory=lambda: PairedTally(0, 0, 0))
    log_e_fail: float = 0.0
    log_e_pass: float = 0.0
    verdict: Verdict | None = None
    rounds: int = 0
    fails_at_margin: bool = False  # FAIL against "the drop is at most the margin" (a divergence), not "no drop"

    def add(self, losses: int, ties: int, wins: int, margin: float) -> None:
        """Count a round's pairs. A decided pooled row takes no more: once it is, only some of its lengths
        are still sampled, and it would no longer weigh them equally."""
        t = self.tally
        if not isinstance(t, PairedTally):
            raise TypeError("a row of answer-probability differences takes values (add_values)")
        self._take(PairedTally(t.losses + losses, t.ties + ties, t.wins + wins), margin)

    def add_values(self, values: Sequence[float], margin: float) -> None:
        """Count a round's continuous differences (each in [-1, 1]), as `add` counts ternary ones."""
        t = self.tally
        if not isinstance(t, PairedValues):
            raise TypeError("a row of correctness differences takes counts (add)")
        self._take(t.plus(values), margin)

    def add_diffs(self, diffs: Sequence[float], margin: float) -> None:
        """Count a round's differences, whichever kind of row this is (-1/0/1 counted, or values kept)."""
        if isinstance(self.tally, PairedValues):
            self.add_values(diffs, margin)
        else:
            self.add(
                sum(1 for d in diffs if d < 0), sum(1 for d in diffs if d == 0), sum(1 for d in diffs if d > 0), margin
            )

    def _take(self, tally: Evidence, margin: float) -> None:
        if self.primary and self.verdict is not None:
            return
        self.tally = tally
        self.rounds += 1
        self.log_e_fail = max(
            self.log_e_fail, log_e_below(-margin, self.tally) if self.fails_at_margin else log_e_fail(self.tally)
        )
        self.log_e_pass = max(self.log_e_pass, log_e_pass(margin, self.tally))

    @property
    def p_fail(self) -> float:
        return p_from_log_e(self.log_e_fail)

    @property
    def p_pass(self) -> float:
        return p_from_log_e(self.log_e_pass)

    def interval(self, alpha: float) -> tuple[float, float]:
        """Each bound one-sided at level alpha (the betting CS at 2 alpha), as the verdicts are: a PASS row's
        lower bound is above -margin, whatever its share of alpha (a share is at most alpha)."""
        return betting_cs(self.tally, min(2.0 * alpha, 0.99))


def decide(
    rows: Sequence[SequentialRow],
    margin: float,
    alpha: float,
    share: float = PRIMARY_SHARE,
    pass_rule: PassRule = "each",
) -> list[Verdict | None]:
    """Each row's verdict now (None: not decided yet), and the rows' `verdict` set where decided. A decided
    row keeps its verdict: its p-values only fall, and Holm's adjustment only falls with them. PASS is each
    row's own p-value against alpha (`pass_rule="holm"`: the earlier weighted Holm, for comparison)."""
    weights = row_weights([r.primary for r in rows], share)
    adj_fail = weighted_holm([r.p_fail for r in rows], weights)
    adj_pass = weighted_holm([r.p_pass for r in rows], weights) if pass_rule == "holm" else [r.p_pass for r in rows]
    out: list[Verdict | None] = []
    for row, pf, pp in zip(rows, adj_fail, adj_pass):
        if row.verdict is None:
            if pf < alpha and row.tally.mean < -margin:
                row.verdict = "FAIL"
            elif pp < alpha:
                row.verdict = "PASS"
        out.append(row.verdict)
    return out


# A family whose pooled row is decided keeps sampling a length only while that length's own row looks like
# a drop (its mean difference below -SUSPECT * margin): a drop at one length is the case the pooled row
# averages away, and a length that looks fine costs nothing more.
SUSPECT = 0.5


def open_rows(rows: Sequence[SequentialRow], margin: float) -> list[bool]:
    """Which of one family's rows (its pooled row and its per-length rows) want another round: all of them
    while the pooled row is undecided; once it is, the undecided lengths that look like a drop; none once
    any row FAILs. Choosing from the past keeps every row's e-process valid (a row is sampled or not, it
    never sees a sample out of turn)."""
    if any(r.verdict == "FAIL" for r in rows):
        return [False] * len(rows)
    if not any(r.primary for r in rows):
        return [r.verdict is None for r in rows]
    if any(r.primary and r.verdict is None for r in rows):
        return [True] * len(rows)
    return [not r.primary and r.verdict is None and r.tally.n > 0 and r.tally.mean < -SUSPECT * margin for r in rows]


def family_done(rows: Sequence[SequentialRow], margin: float = 0.0) -> bool:
    """A family stops sampling once no row of it wants another round (`open_rows`)."""
    return not any(open_rows(rows, margin))


def gate_verdict(rows: Sequence[SequentialRow], verdicts: Sequence[Verdict]) -> Verdict:
    """The gate's word on its rows (`overall_verdict`)."""
    return overall_verdict([r.primary for r in rows], verdicts)


def overall_verdict(primary: Sequence[bool], verdicts: Sequence[str]) -> Verdict:
    """The one function that turns row verdicts into the gate's word, for every output that says it (the
    terminal, JUnit, the markdown summary, compare.json, the report): FAIL when any row fails; PASS when every
    primary row passes (the intersection-union test of the module docstring: per-length rows are secondary:
    they can fail the gate, and are reported, but need not be decided); else UNDECIDED (no row at all too)."""
    if "FAIL" in verdicts:
        return "FAIL"
    chosen = [v for p, v in zip(primary, verdicts, strict=True) if p] or list(verdicts)
    return "PASS" if chosen and all(v == "PASS" for v in chosen) else "UNDECIDED"


def fewest_to_pass(
    margin: float, alpha: float, lo: float = -1.0, hi: float = 1.0, value: float = 0.0, most: int = 1_000_000
) -> int | None:
    """The fewest observations, every one exactly `value` (0: the two builds agree everywhere), at which a row
    of values in [lo, hi] PASSes at `margin` and `alpha` (its e-value against "a drop of the margin or more"
    reaches 1 / alpha), by the rule `decide` applies; None if not within `most`.

    Where an observation is a chain's mean difference (a nested run's rows), this is the least number of
    chains a PASS can take, whatever the model: with fewer a row can FAIL, never PASS. Any valid test needs
    some such number: the law with a share q = margin / (value - lo) of its observations at `lo` and the rest
    at `value` lies `margin` below `value`, and draws n observations that all equal `value` with probability
    (1 - q)^n, so no test at level alpha PASSes them while that is above alpha: from
    log(1 / alpha) / -log(1 - q) on (59 chains at 5 points on [-1, 1], value 0). The betting rule spreads its
    stake over a grid of bet sizes (`betting.STAKES`) and needs more than that floor."""
    if not 0.0 < alpha < 1.0 or not lo <= value <= hi or not 0.0 < margin < value - lo:
        raise ValueError(
            f"need 0 < alpha < 1, lo <= value <= hi and 0 < margin < value - lo; got alpha {alpha}, "
            f"[{lo}, {hi}], value {value}, margin {margin}"
        )

    def passes(n: int) -> bool:
        return p_from_log_e(log_e_pass(margin, PairedValues((value,) * n, lo, hi))) < alpha

    top = 1
    while not passes(top):
        if top >= most:
            return None
        top = min(2 * top, most)
    low = top // 2  # fails (or 0)
    while top - low > 1:
        mid = (low + top) // 2
        low, top = (low, mid) if passes(mid) else (mid, top)
    return top


def final_verdicts(
    rows: Sequence[SequentialRow], margin: float, alpha: float, pass_rule: PassRule = "each"
) -> list[Verdict]:
    """The verdicts when sampling has ended: undecided rows are UNDECIDED."""
    return [v or "UNDECIDED" for v in decide(rows, margin, alpha, pass_rule=pass_rule)]
