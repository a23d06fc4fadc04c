"""What a comparison writes of KL at depth (inside `compare.json`): per candidate, the rows of mean
KL(base || cand) and top-1 agreement at each answer position, per cell (length x depth), per family x
length and per family, and how many pairs were left out and why. Computed in `evals.paired.kl`; typed
here so compare, its outputs and the report read one shape."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# A statistic that may be undefined (an interval of one sample): JSON has no NaN, so it is written as null and
# read back as NaN, the value the tables print as "-".
MaybeNumber = Annotated[float, BeforeValidator(lambda v: math.nan if v is None else v)]

KLLevel = Literal["cell", "family_length", "family"]  # compare's row levels (`evals.log.compare.Level`)


class KLRow(BaseModel):
    """One group of pairs: means over samples of each sample's mean over its gold positions."""

    model_config = ConfigDict(frozen=True)

    candidate: str
    level: KLLevel
    family: str
    variant: str
    haystack: str
    context_tokens: int = Field(description="0 on a family row (all lengths)")
    depth: float | None
    n: int = Field(description="pairs (samples) in the group")
    positions: int = Field(description="gold positions those pairs hold")
    kl: MaybeNumber = Field(description="mean KL(base || cand), nats: the least divergence both top-k lists allow")
    kl_lo: MaybeNumber
    kl_hi: MaybeNumber
    top1: MaybeNumber = Field(description="share of positions where both runs' likeliest token is the same")
    top1_lo: MaybeNumber
    top1_hi: MaybeNumber
    base_rest: float = Field(
        description="mean baseline probability outside the tokens it lists: divergence "
        "the top-k lists cannot see lies in this mass"
    )
    top_k: int = Field(description="the shortest top-k list either run gave in the group")
    verdict: Literal["FAIL", "PASS", "UNDECIDED"] | None = Field(
        None,
        description="`compare --metric kl`, on pooled family and family x length rows: the KL gate's "
        "verdict against the margin (None where the gate did not judge)",
    )
    gate_lo: float | None = Field(
        None,
        description="the gate's lower bound on the capped mean KL, nats "
        "(one-sided at alpha: a 2 alpha betting confidence sequence)",
    )
    gate_hi: float | None = Field(None, description="the gate's upper bound, likewise")
    p_fail: float | None = Field(None, description="anytime-valid p-value against 'mean KL at most the margin'")
    p_pass: float | None = Field(None, description="anytime-valid p-value against 'capped mean KL at least the margin'")


class CandidateKL(BaseModel):
    """KL at depth for one candidate against the baseline."""

    model_config = ConfigDict(frozen=True)

    candidate: str
    pairs: int = Field(description="pairs compared position by position")
    left_out: dict[str, int] = Field(default_factory=dict, description="pairs left out, by reason")
    rows: list[KLRow] = Field(default_factory=list)


class KLComparison(BaseModel):
    """KL at depth for every candidate, and how it was computed."""

    model_config = ConfigDict(frozen=True)

    method: str
    interval_method: str
    candidates: list[CandidateKL]
    margin: float | None = Field(
        None, description="`compare --metric kl`: the margin in nats the gate judged against (None: no KL gate)"
    )
    gate_method: str | None = None

    def computed(self) -> bool:
        """Some candidate has a pair compared position by position."""
        return any(c.pairs for c in self.candidates)


def find_row(
    kl: KLComparison | None, candidate: str, level: str, family: str, variant: str, haystack: str, context_tokens: int
) -> KLRow | None:
    """The KL row of one compare row (None where its pairs had nothing to compare position by position)."""
    for cand in kl.candidates if kl else []:
        for row in cand.rows if cand.candidate == candidate else []:
            if (row.level, row.family, row.variant, row.haystack, row.context_tokens) == (
                level,
                family,
                variant,
                haystack,
                context_tokens,
            ):
                return row
    return None
