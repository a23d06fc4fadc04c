"""`ctxprobe check RUN_DIR...`: list the damaged lines of each run's samples.jsonl (every reader skips them,
with a warning) and, with `--repair`, write the good lines to samples.clean.jsonl beside the original,
which is never changed. Exit codes: `tasks/exit_codes.py`'s table (1: damaged lines found)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxprobe.evals.cli.options import exit_codes_epilog


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="list the damaged lines of run folders' samples.jsonl (and write a clean copy)",
        description="List the lines of each run's samples.jsonl that hold no record (blank, NUL "
        "bytes, not UTF-8, invalid JSON, not a sample record), with their line "
        "numbers.",
        **exit_codes_epilog("check"),
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folders")
    p.add_argument(
        "--repair",
        action="store_true",
        help="write the good lines to samples.clean.jsonl beside samples.jsonl (the original is "
        "never changed; replace it yourself once you have looked)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ctxprobe.evals.records.lines import scan, write_clean_copy
    from ctxprobe.evals.records.store import RunStore
    from ctxprobe.tasks.errors import UserError

    damaged_any = False
    for run_dir in args.run_dirs:
        store = RunStore(Path(run_dir))
        if not store.dir.is_dir() or not any(
            (store.dir / name).exists() for name in ("manifest.json", "samples.jsonl")
        ):
            raise UserError(f"not a run folder (no manifest.json, no samples.jsonl): {run_dir}")
        try:
            loaded = store.load_manifest()
            manifest = f"manifest {loaded.status}"
        except UserError as exc:
            loaded, manifest, damaged_any = None, f"manifest unreadable: {exc}", True
        if loaded is not None:
            try:
                store.check_records_present(loaded)
            except UserError as exc:
                manifest, damaged_any = f"{manifest}; {exc}", True
        found = scan(store.samples_path)
        torn = f", an unfinished last line {found.torn_tail}" if found.torn_tail else ""
        print(f"{store.dir}: {manifest}; {len(found.records)} records, {len(found.damaged)} damaged lines{torn}")
        for bad in found.damaged:
            print(f"  {bad.describe()}  starts {bad.start!r}")
        damaged_any = damaged_any or bool(found.damaged)
        if args.repair and (found.damaged or found.torn_tail):
            out = write_clean_copy(found)
            print(f"  wrote {out}: {len(found.records)} records (samples.jsonl unchanged)")
    return 1 if damaged_any else 0
