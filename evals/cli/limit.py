"""`ctxprobe limit`: advertised vs configured vs accepted vs effective context length, with few requests."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ctxprobe.evals.cli.options import add_model_args, exit_codes_epilog, model_values
from ctxprobe.evals.cli.run import add_endpoint_args

if TYPE_CHECKING:
    from ctxprobe.evals.run.send.loop import Progress


# `--threshold` is `run --stop decided`'s stopping threshold; here the accuracy a length must reach has its own name.
RENAMED = {"threshold": "--min-accuracy"}


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.evals.limit.options import LimitOptions
    from ctxprobe.evals.run.send.options import EndpointOptions

    p = sub.add_parser(
        "limit",
        help="advertised vs configured vs accepted vs effective context length",
        description="The four context lengths of an endpoint, each with its source. "
        "Several endpoints are measured side by side; none: the engine ctxprobe starts "
        "(llama.cpp at the model's trained context or --max-length; --engine vllm).",
        **exit_codes_epilog("limit"),
    )
    p.add_argument(
        "urls",
        nargs="*",
        metavar="ENDPOINT",
        help="the endpoint's base URL, as `doctor` takes it (the same as --endpoint URL)",
    )
    own = {k: v for k, v in LimitOptions.model_fields.items() if k not in EndpointOptions.model_fields}
    add_model_args(p.add_argument_group("limit"), own, repeat={"tasks": "--task"}, renamed=RENAMED)
    add_endpoint_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.limit.options import LimitOptions
    from ctxprobe.evals.limit.report import render_limits
    from ctxprobe.evals.run.send.options import validated

    values = model_values(args, LimitOptions.flat_fields())
    if args.urls:
        values["endpoints"] = [*args.urls, *values.get("endpoints", [])]
    options = validated(LimitOptions, values, flags=RENAMED)
    report = ctxprobe.limit(options, on_progress=_progress_line)
    print(render_limits(report.targets))
    print(f"ctxprobe: wrote {report.run_dir / 'limit.json'}", file=sys.stderr)
    return 0


def _progress_line(length: int, progress: Progress) -> None:
    end = "\r" if sys.stderr.isatty() else "\n"
    print(f"  {length:>9,} tokens: {progress.line()}", end=end, file=sys.stderr, flush=True)
