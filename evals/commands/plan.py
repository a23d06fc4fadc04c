"""`ctxprobe plan CONFIG.json`: KV-cache and recurrent-state budget from a model's config.json,
and how many sequences of each length fit on the GPUs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxprobe.evals.plan.budget import BudgetOptions, GpuBudget, MlaCache, plan_budget
from ctxprobe.evals.plan.config import ModelConfig, load_config
from ctxprobe.evals.plan.layers import PATTERN_HELP, read_layers
from ctxprobe.evals.plan.report import build_report, render_table
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


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="KV-cache and memory budget from a model's config.json (hybrid linear + MLA aware)",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("config", help="the model's config.json (or the directory holding it)")
    parser.add_argument(
        "--contexts",
        default=DEFAULT_CONTEXTS,
        help=f"context lengths, comma-separated; k = 1024, m = 1,000,000, M = 2^20 (default {DEFAULT_CONTEXTS})",
    )
    parser.add_argument("--cache-dtype", default="bf16", help=f"KV / latent cache dtype: {', '.join(CACHE_DTYPES)}")
    parser.add_argument("--state-dtype", default="fp32", help=f"recurrent state dtype: {', '.join(STATE_DTYPES)}")
    parser.add_argument(
        "--mla-cache",
        default="absorbed",
        help="absorbed (latent + rope per token, as vLLM/SGLang serve MLA) or expanded (per-head K and V)",
    )
    parser.add_argument("--layer-pattern", help=f"override the layout, repeated to the layer count: {PATTERN_HELP}")
    parser.add_argument("--include-mtp", action="store_true", help="count the MTP layer(s) as full attention")
    parser.add_argument(
        "--include-conv", action="store_true", help="count the short-convolution state in totals and fits"
    )
    parser.add_argument("--gpus", type=int, help="number of GPUs serving the model")
    parser.add_argument("--gpu-mem", help="memory per GPU, e.g. 141GB or 80GiB (GB = 10^9 bytes)")
    parser.add_argument("--util", default=DEFAULT_UTIL, help=f"fraction of GPU memory usable (default {DEFAULT_UTIL})")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument("--weights", help="total weight memory across the GPUs, e.g. 573.8GB")
    weights.add_argument("--weights-from", type=Path, help="a checkpoint directory: sums its *.safetensors sizes")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=run)


def _gpu_budget(args: argparse.Namespace) -> GpuBudget | None:
    given = [args.gpus is not None, args.gpu_mem is not None, args.weights is not None or args.weights_from is not None]
    if not any(given):
        return None
    if not all(given):
        raise UserError("GPU fit needs --gpus N, --gpu-mem SIZE and --weights SIZE (or --weights-from DIR)")
    if args.gpus < 1:
        raise UserError(f"--gpus {args.gpus}: must be at least 1")
    weights = safetensors_bytes(args.weights_from) if args.weights_from else parse_size(args.weights, "--weights")
    return GpuBudget(
        gpus=args.gpus,
        gpu_mem_bytes=parse_size(args.gpu_mem, "--gpu-mem"),
        util=parse_fraction(args.util, "--util"),
        weights_bytes=weights,
    )


def _mla_cache(text: str) -> MlaCache:
    if text == "absorbed":
        return "absorbed"
    if text == "expanded":
        return "expanded"
    raise UserError(f"--mla-cache {text!r} is not one of absorbed, expanded")


def run(args: argparse.Namespace) -> int:
    path = Path(args.config)
    model = read_layers(ModelConfig(load_config(path), name=str(path)), args.layer_pattern)
    cache_dtype = parse_dtype(args.cache_dtype, CACHE_DTYPES, "--cache-dtype")
    state_dtype = parse_dtype(args.state_dtype, STATE_DTYPES, "--state-dtype")
    contexts = tuple(dict.fromkeys(parse_lengths(args.contexts)))
    if not contexts:
        raise UserError(f"--contexts {args.contexts!r}: give at least one length")
    options = BudgetOptions(
        contexts=contexts,
        cache_bytes=DTYPE_BYTES[cache_dtype],
        state_bytes=DTYPE_BYTES[state_dtype],
        mla_cache=_mla_cache(args.mla_cache),
        include_mtp=args.include_mtp,
        include_conv=args.include_conv,
    )
    report = build_report(plan_budget(model, options, _gpu_budget(args)), cache_dtype, state_dtype)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(render_table(report), end="")
    return 0
