"""`ctxprobe plan CONFIG.json`: KV-cache and recurrent-state budget from a model's config.json,
and how many sequences of each length fit on the GPUs."""

from __future__ import annotations

import argparse
from typing import Any

from ctxprobe.evals.cli.options import JsonOutput, add_model_args, model_values
from ctxprobe.evals.plan.options import PlanOptions


class PlanArgs(PlanOptions, JsonOutput):
    """The plan's options and how its report is printed."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="KV-cache and memory budget from a model's config.json (hybrid linear + MLA aware)",
        description=__doc__.splitlines()[0],
    )
    add_model_args(parser, PlanArgs.model_fields, positional=("config",))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.plan.report import render_table
    from ctxprobe.tasks.errors import validated

    opts = validated(PlanArgs, model_values(args, PlanArgs.model_fields))
    report = ctxprobe.plan(PlanOptions.model_validate(opts.model_dump(exclude={"as_json"})))
    if opts.as_json:
        print(report.model_dump_json(indent=2))
    else:
        print(render_table(report), end="")
    return 0
