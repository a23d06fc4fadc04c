"""`ctxprobe history RESULTS_DIR`: parse, call `ctxprobe.history`, print the table over time and the
night-to-night drops. Exit code 0 (2 for bad input); the gate on one night is `ctxprobe compare`."""

from __future__ import annotations

import argparse

from ctxprobe.evals.commands.options import number
import sys


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("history", help="accuracy of one suite's finished runs over time, each night tested against the last",
                       description="Every finished run of one suite in RESULTS_DIR, oldest first: accuracy per "
                                   "family x length with Clopper-Pearson intervals, errors, a trend PNG, and each run "
                                   "compared with the one before by the paired test of `compare` (drops flagged).")
    p.add_argument("results_dir", help="the folder holding run folders (e.g. results)")
    p.add_argument("--label", default=None, help="only runs with this label")
    p.add_argument("--suite", default=None, help="only runs of this suite (needed when the folder holds several)")
    p.add_argument("--alpha", type=number, default=0.05, help="significance level after Holm (default: 0.05)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ctxprobe
    from ctxprobe.evals.compare.history_outputs import render_text

    if not 0.0 < args.alpha < 1.0:
        raise ctxprobe.UserError(f"--alpha must be between 0 and 1, got {args.alpha}")
    result = ctxprobe.history(args.results_dir, label=args.label, suite=args.suite, alpha=args.alpha)
    print(render_text(result), end="")
    print(f"ctxprobe: wrote {result.out_dir}", file=sys.stderr)
    return 0
