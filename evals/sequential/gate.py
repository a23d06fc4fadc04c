"""The paired sequential gate: rows (each family pooled over its lengths, the primary test, and each
family x length, secondary) gather paired differences in rounds, and each is decided by anytime-valid
e-values, so the gate's error rates hold however early a row stops.

- FAIL: the candidate is worse than the baseline (the betting e-process against "no drop", delta >= 0,
  which only the discordant pairs move, as in McNemar's test, crosses its weighted-Holm level) and its mean
  difference is below -margin: the fixed gate's rule (significant, and a drop larger than the margin), made
  anytime-valid.
- PASS: the drop is confidently smaller than the margin (the betting e-process against delta <= -margin
  crosses its level).
- UNDECIDED: neither, when the pairs run out.

The e-values are `betting.py`'s. Each side is one weighted Holm over all rows (`holm.py`): P(any false FAIL)
<= alpha, and P(any false PASS) <= alpha. Which rows are sampled next is `open_rows`: the whole family while
its pooled row is undecided, then only the lengths that look like a drop, until none is left or a row
FAILs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxprobe.evals.confseq import PairedTally, p_from_log_e
from ctxprobe.evals.sequential.betting import betting_cs, log_e_fail, log_e_pass
from ctxprobe.evals.sequential.holm import PRIMARY_SHARE, row_weights, weighted_holm

Verdict = Literal["FAIL", "PASS", "UNDECIDED"]
GATE_METHOD = ("anytime-valid betting e-values (Waudby-Smith & Ramdas); FAIL: a drop significant against 0 "
               "(the discordant pairs) and below -margin; PASS: significantly above -margin; weighted Holm over "
               f"all rows (pooled family rows primary, {PRIMARY_SHARE:.0%} of alpha)")


@dataclass
class SequentialRow:
    """One row's running evidence. `log_e_fail` / `log_e_pass` are running maxima (an e-process's maximum
    so far is what its anytime-valid p-value reads)."""

    primary: bool
    tally: PairedTally = field(default_factory=lambda: PairedTally(0, 0, 0))
    log_e_fail: float = 0.0
    log_e_pass: float = 0.0
    verdict: Verdict | None = None
    rounds: int = 0

    def add(self, losses: int, ties: int, wins: int, margin: float) -> None:
        """Count a round's pairs. A decided pooled row takes no more: once it is, only some of its lengths
        are still sampled, and it would no longer weigh them equally."""
        if self.primary and self.verdict is not None:
            return
        t = self.tally
        self.tally = PairedTally(t.losses + losses, t.ties + ties, t.wins + wins)
        self.rounds += 1
        self.log_e_fail = max(self.log_e_fail, log_e_fail(self.tally))
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


def decide(rows: Sequence[SequentialRow], margin: float, alpha: float,
           share: float = PRIMARY_SHARE) -> list[Verdict | None]:
    """Each row's verdict now (None: not decided yet), and the rows' `verdict` set where decided. A decided
    row keeps its verdict: its p-values only fall, and Holm's adjustment only falls with them."""
    weights = row_weights([r.primary for r in rows], share)
    adj_fail = weighted_holm([r.p_fail for r in rows], weights)
    adj_pass = weighted_holm([r.p_pass for r in rows], weights)
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
    return [not r.primary and r.verdict is None and r.tally.n > 0 and r.tally.mean < -SUSPECT * margin
            for r in rows]


def family_done(rows: Sequence[SequentialRow], margin: float = 0.0) -> bool:
    """A family stops sampling once no row of it wants another round (`open_rows`)."""
    return not any(open_rows(rows, margin))


def gate_verdict(rows: Sequence[SequentialRow], verdicts: Sequence[Verdict]) -> Verdict:
    """FAIL when any row fails; PASS when every primary row passes (per-length rows are secondary: they
    can fail the gate, and are reported, but need not be decided); else UNDECIDED."""
    if "FAIL" in verdicts:
        return "FAIL"
    primary = [v for r, v in zip(rows, verdicts) if r.primary] or list(verdicts)
    return "PASS" if all(v == "PASS" for v in primary) else "UNDECIDED"


def final_verdicts(rows: Sequence[SequentialRow], margin: float, alpha: float) -> list[Verdict]:
    """The verdicts when sampling has ended: undecided rows are UNDECIDED."""
    return [v or "UNDECIDED" for v in decide(rows, margin, alpha)]
