"""When a cell of one run is decided: `--stop decided` samples a cell in rounds of seeds and stops it as
soon as its confidence sequence (`bernoulli_cs`, valid however early it stops) lies wholly above or below
`threshold`, or is at most `precision` wide on each side, never before `min_samples` and never past
`max_samples` (the cap)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from ctxprobe.evals.compare.confseq import bernoulli_cs
from ctxprobe.tasks.errors import UserError, first_problem

StopReason = Literal["above", "below", "precision", "cap"]
STOP_REASONS: dict[str, str] = {
    "above": "decided above the threshold",
    "below": "decided below the threshold",
    "precision": "precision reached",
    "cap": "at the cap (max samples)",
}


class StopRule(BaseModel):
    """How a run decides it has sampled a cell enough. `fixed` (the default) samples every cell the suite's
    `samples` times; `decided` stops each cell when its interval settles it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stop: Literal["fixed", "decided"] = Field(
        "fixed",
        description="fixed: every cell gets the suite's samples; "
        "decided: each cell stops once its anytime-valid interval decides it",
    )
    threshold: float | None = Field(
        None, gt=0, lt=1, description="decided: stop a cell once it is confidently above or below this accuracy"
    )
    precision: float | None = Field(
        None, gt=0, lt=0.5, description="decided: stop a cell once its interval's half-width is at most this"
    )
    min_samples: int = Field(1, ge=1, description="decided: samples every cell gets before it may stop")
    max_samples: int | None = Field(None, ge=1, description="decided: the cap per cell (default: the suite's samples)")
    alpha: float = Field(0.05, gt=0, lt=1, description="decided: 1 - the intervals' confidence")

    @model_validator(mode="after")
    def _goal(self) -> StopRule:
        if self.stop == "decided" and self.threshold is None and self.precision is None:
            raise ValueError("--stop decided needs --threshold or --precision (or both)")
        if self.max_samples is not None and self.min_samples > self.max_samples:
            raise ValueError(f"--min-samples {self.min_samples} is above --max-samples {self.max_samples}")
        return self

    def cap(self, suite_samples: int) -> int:
        return self.max_samples if self.max_samples is not None else suite_samples


# The run's options: each field of the rule, unset by default (the suite's `stop:` then decides), declared
# once above.
_UNSET_RULE: dict[str, Any] = {
    name: (cast(Any, field.annotation) | None, Field(None, description=field.description))
    for name, field in StopRule.model_fields.items()
    if name != "alpha"
}
if TYPE_CHECKING:
    StopOptions: TypeAlias = Any  # a model made at import: its fields are StopRule's, unknown to a type checker
else:
    StopOptions = create_model("StopOptions", __config__=ConfigDict(extra="forbid"), **_UNSET_RULE)


def resolve_rule(suite_stop: str | dict[str, Any] | None, given: dict[str, Any]) -> StopRule:
    """The run's rule: the suite's `stop:` (a name or a mapping of the fields), the options given on top.
    Bad values are one line naming the option."""
    base: dict[str, Any] = {"stop": suite_stop} if isinstance(suite_stop, str) else dict(suite_stop or {})
    base.update({k: v for k, v in given.items() if v is not None})
    try:
        return StopRule.model_validate(base)
    except ValidationError as exc:
        where, msg, _ = first_problem(exc)
        where_text = f"--{where.replace('_', '-')}: " if where else ""
        raise UserError(f"invalid stop rule {where_text}{msg.removeprefix('Value error, ')}") from None


@lru_cache(maxsize=65536)
def _interval(successes: int, n: int, alpha: float) -> tuple[float, float]:
    return bernoulli_cs(successes, n, alpha)


def cell_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The cell's confidence sequence at `n` samples (cached: cells share small counts)."""
    return _interval(successes, n, alpha)


def stop_reason(successes: int, n: int, rule: StopRule, cap: int) -> StopReason | None:
    """Why a cell with `successes` of `n` scored samples stops now, or None to send it another round."""
    if n >= cap:
        return "cap"
    if n < rule.min_samples:
        return None
    lo, hi = cell_interval(successes, n, rule.alpha)
    if rule.threshold is not None:
        if lo > rule.threshold:
            return "above"
        if hi < rule.threshold:
            return "below"
    if rule.precision is not None and (hi - lo) / 2.0 <= rule.precision:
        return "precision"
    return None
