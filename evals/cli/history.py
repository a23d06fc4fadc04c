"""`ctxprobe history RESULTS_DIR`: parse, call `ctxprobe.history`, print the table over time and the
night-to-night drops. Exit code 0 (2 for bad input); the gate on one night is `ctxprobe compare`."""

from __future__ import annotations

import argparse
import sys

from ctxprobe.evals.cli.options import add_model_args, model_values


def register(sub: argparse._SubParsersAction) -> None:
    from ctxprobe.evals.compare.options import HistoryOptions

    p = sub.add_parser(
        "history",
        help="accuracy of one suite's finished runs over time, each night tested against the last",
        description="Every finished run of one suite in RESULTS_DIR, oldest first: accuracy per "
        "family x length with Clopper-Pearson intervals, errors, a trend PNG, and each run "
        "compared with the one before by the paired test of `compare` (drops flagged).",
    )
    add_model_args(p, HistoryOptions.model_fields, positional=("results_dir",))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.compare.history_outputs import render_text
    from ctxprobe.evals.compare.options import HistoryOptions
    from ctxprobe.tasks.errors import validated

    opts = validated(HistoryOptions, model_values(args, HistoryOptions.model_fields))
    result = ctxprobe.history(
        opts.results_dir,
        label=opts.label,
        suite=opts.suite,
        alpha=opts.alpha,
        metric=opts.metric,
        kl_margin=opts.kl_margin,
    )
    print(render_text(result), end="")
    print(f"ctxprobe: wrote {result.out_dir}", file=sys.stderr)
    return 0
