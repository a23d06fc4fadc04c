"""`ctxprobe.plan(...)`: the KV-cache and state budget of a model from its config.json, per context
length, and how many sequences fit on the given GPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxprobe.evals.plan.budget import BudgetOptions, GpuBudget, MlaCache, plan_budget
from ctxprobe.evals.plan.config import ModelConfig, load_config
from ctxprobe.evals.plan.layers import read_layers
from ctxprobe.evals.plan.options import CACHE_DTYPES, DEFAULT_CONTEXTS, DEFAULT_UTIL, STATE_DTYPES, PlanOptions
from ctxprobe.evals.plan.report import PlanReport, build_report
from ctxprobe.evals.plan.units import (
    DTYPE_BYTES,
    parse_dtype,
    parse_fraction,
    parse_size,
    safetensors_bytes,
)
from ctxprobe.tasks.errors import UserError, validated
from ctxprobe.tasks.lengths import parse_lengths

__all__ = ["CACHE_DTYPES", "DEFAULT_CONTEXTS", "DEFAULT_UTIL", "STATE_DTYPES", "PlanOptions", "plan"]


def plan(config: str | Path | PlanOptions, **kwargs: Any) -> PlanReport:
    """The budget report (`render_table(report)` prints it; `report.model_dump_json()` is its JSON) of
    `PlanOptions`, or of a config.json path and `PlanOptions` fields as keywords."""
    opts = config if isinstance(config, PlanOptions) else validated(PlanOptions, {"config": str(config), **kwargs})
    path = Path(opts.config)
    model = read_layers(ModelConfig(load_config(path), name=str(path)), opts.layer_pattern)
    cache = parse_dtype(opts.cache_dtype, CACHE_DTYPES, "--cache-dtype")
    state = parse_dtype(opts.state_dtype, STATE_DTYPES, "--state-dtype")
    lengths = tuple(dict.fromkeys(parse_lengths(opts.contexts)))
    if not lengths:
        raise UserError(f"--contexts {opts.contexts!r}: give at least one length")
    options = BudgetOptions(
        contexts=lengths,
        cache_bytes=DTYPE_BYTES[cache],
        state_bytes=DTYPE_BYTES[state],
        mla_cache=_mla_cache(opts.mla_cache),
        include_mtp=opts.include_mtp,
        include_conv=opts.include_conv,
    )
    if opts.weights is not None and opts.weights_from is not None:
        raise UserError("give --weights or --weights-from, not both")
    gpu = _gpu_budget(
        opts.gpus, opts.gpu_mem, opts.util, opts.weights, Path(opts.weights_from) if opts.weights_from else None
    )
    return build_report(plan_budget(model, options, gpu), cache, state)


def _gpu_budget(
    gpus: int | None, gpu_mem: str | None, util: str, weights: str | None, weights_from: Path | None
) -> GpuBudget | None:
    given = [gpus is not None, gpu_mem is not None, weights is not None or weights_from is not None]
    if not any(given):
        return None
    if not all(given):
        raise UserError("GPU fit needs --gpus N, --gpu-mem SIZE and --weights SIZE (or --weights-from DIR)")
    assert gpus is not None and gpu_mem is not None
    if gpus < 1:
        raise UserError(f"--gpus {gpus}: must be at least 1")
    weight_bytes = safetensors_bytes(weights_from) if weights_from else parse_size(weights or "", "--weights")
    return GpuBudget(
        gpus=gpus,
        gpu_mem_bytes=parse_size(gpu_mem, "--gpu-mem"),
        util=parse_fraction(util, "--util"),
        weights_bytes=weight_bytes,
    )


def _mla_cache(text: str) -> MlaCache:
    if text == "absorbed":
        return "absorbed"
    if text == "expanded":
        return "expanded"
    raise UserError(f"--mla-cache {text!r} is not one of absorbed, expanded")
