"""`ctxprobe show RUN_DIR`: the accuracy table of a run again (also of one still running)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print a run's accuracy table (and rewrite its summary and heatmaps)")
    p.add_argument("run_dir", help="a run folder under results/")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ctxprobe.evals.records.load import load_run

    run = load_run(args.run_dir, needles=False)  # a folder that is no run ends here, before pandas and matplotlib load
    from ctxprobe.evals.report.summary import write_report

    print(f"{run.dir}  [{run.manifest.status}]  {len(run.records)} samples")
    print(write_report(run.records, run.dir, run.manifest), end="")
    return 0
