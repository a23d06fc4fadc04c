"""`ctxprobe.plan(...)`: the KV-cache and state budget of a model from its config.json, per context
length, and how many sequences fit on the given GPUs."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.plan.budget import BudgetOptions, GpuBudget, MlaCache, plan_budget
from ctxprobe.evals.plan.config import ModelConfig, load_config
from ctxprobe.evals.plan.layers import read_layers
from ctxprobe.evals.plan.report import PlanReport, build_report
from ctxprobe.evals.plan.units import (
    DTYPE_BYTES,
    parse_dtype,
    parse_fraction,
    parse_size,
    safetensors_bytes,
)
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.lengths import parse_lengths

DEFAULT_CONTEXTS = "32k,128k,262144,1m"
DEFAULT_UTIL = "0.9"
CACHE_DTYPES = ("bf16", "fp16", "fp8")
STATE_DTYPES = ("fp32", "bf16", "fp16")


def plan(config: str | Path, *, contexts: str = DEFAULT_CONTEXTS, cache_dtype: str = "bf16",
         state_dtype: str = "fp32", mla_cache: str = "absorbed", layer_pattern: str | None = None,
         include_mtp: bool = False, include_conv: bool = False, gpus: int | None = None,
         gpu_mem: str | None = None, util: str = DEFAULT_UTIL, weights: str | None = None,
         weights_from: str | Path | None = None) -> PlanReport:
    """The budget report (`render_table(report)` prints it; `report.model_dump_json()` is its JSON)."""
    path = Path(config)
    model = read_layers(ModelConfig(load_config(path), name=str(path)), layer_pattern)
    cache = parse_dtype(cache_dtype, CACHE_DTYPES, "--cache-dtype")
    state = parse_dtype(state_dtype, STATE_DTYPES, "--state-dtype")
    lengths = tuple(dict.fromkeys(parse_lengths(contexts)))
    if not lengths:
        raise UserError(f"--contexts {contexts!r}: give at least one length")
    options = BudgetOptions(
        contexts=lengths,
        cache_bytes=DTYPE_BYTES[cache],
        state_bytes=DTYPE_BYTES[state],
        mla_cache=_mla_cache(mla_cache),
        include_mtp=include_mtp,
        include_conv=include_conv,
    )
    gpu = _gpu_budget(gpus, gpu_mem, util, weights, Path(weights_from) if weights_from else None)
    return build_report(plan_budget(model, options, gpu), cache, state)


def _gpu_budget(gpus: int | None, gpu_mem: str | None, util: str, weights: str | None,
                weights_from: Path | None) -> GpuBudget | None:
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
