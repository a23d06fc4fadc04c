"""`ctxprobe show RUN_DIR`: the accuracy table of a run again (also of one still running)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxprobe.evals.report.summary import write_report
from ctxprobe.evals.run.store import RunStore


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("show", help="print a run's accuracy table (and rewrite its summary and heatmaps)")
    p.add_argument("run_dir", help="a run folder under results/")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = RunStore(Path(args.run_dir))
    manifest = store.read_manifest()
    records = list(store.latest_records().values())
    print(f"{Path(args.run_dir)}  [{manifest.get('status', '?')}]  {len(records)} samples")
    print(write_report(records, store.dir, manifest), end="")
    return 0
