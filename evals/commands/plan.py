"""`ctxprobe plan CONFIG.json`: KV-cache and recurrent-state budget from a model's config.json,
and how many sequences of each length fit on the GPUs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxprobe.evals.plan.api import CACHE_DTYPES, DEFAULT_CONTEXTS, DEFAULT_UTIL, STATE_DTYPES
from ctxprobe.evals.plan.layers import PATTERN_HELP


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


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.plan.report import render_table

    report = ctxprobe.plan(args.config, contexts=args.contexts, cache_dtype=args.cache_dtype,
                           state_dtype=args.state_dtype, mla_cache=args.mla_cache, layer_pattern=args.layer_pattern,
                           include_mtp=args.include_mtp, include_conv=args.include_conv, gpus=args.gpus,
                           gpu_mem=args.gpu_mem, util=args.util, weights=args.weights, weights_from=args.weights_from)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(render_table(report), end="")
    return 0
