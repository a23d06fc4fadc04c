"""`ctxprobe limit`: advertised vs configured vs accepted vs effective context length, with few requests."""

from __future__ import annotations

import argparse
import sys

from ctxprobe.evals.commands.options import add_model_args, model_values
from ctxprobe.evals.commands.run import add_endpoint_args


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ctxprobe.evals.limit.options import LimitOptions
    from ctxprobe.evals.send.options import EndpointOptions

    p = sub.add_parser("limit", help="advertised vs configured vs accepted vs effective context length",
                       description="The four context lengths of an endpoint, each with its source. "
                                   "Several --endpoint are measured side by side.")
    own = {k: v for k, v in LimitOptions.model_fields.items() if k not in EndpointOptions.model_fields}
    add_model_args(p.add_argument_group("limit"), own, repeat={"tasks": "--task"})
    add_endpoint_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.limit.options import LimitOptions
    from ctxprobe.evals.limit.report import render_limits
    from ctxprobe.evals.send.options import validated

    options = validated(LimitOptions, model_values(args, LimitOptions.model_fields))
    report = ctxprobe.limit(options)
    print(render_limits(report.targets))
    print(f"ctxprobe: wrote {report.run_dir / 'limit.json'}", file=sys.stderr)
    return 0
