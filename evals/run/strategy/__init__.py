"""How a run's samples go out, one strategy per kind of run (`RunPlan.kind`): a fixed grid (`fixed`), rounds
of seeds until each cell is decided (`sequential`, `--stop decided`), or paired rounds against a baseline run
until each row is decided (`paired`, `--against`). `evals.run.api` runs every kind the same way and asks
the strategy for what differs: the recipes, the manifest's start and end, how to send, the verdict and the
outputs after it."""

from __future__ import annotations

from ctxprobe.evals.run.plan import RunPlan
from ctxprobe.evals.run.strategy.base import Sender, Strategy

__all__ = ["Sender", "Strategy", "strategy_for"]


def strategy_for(plan: RunPlan) -> Strategy:
    """The strategy of the plan's kind (the paired one loads the paired statistics only when asked for)."""
    if plan.kind == "paired":
        from ctxprobe.evals.run.strategy.paired import Paired

        return Paired(plan)
    if plan.kind == "sequential":
        from ctxprobe.evals.run.strategy.sequential import Sequential

        return Sequential(plan)
    from ctxprobe.evals.run.strategy.fixed import Fixed

    return Fixed(plan)
