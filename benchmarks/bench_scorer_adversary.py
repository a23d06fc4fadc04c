"""The scorer against answers written to game it, and honest ones: per answer kind, how many gamed answers it
credits and how many honest ones it rejects, and the same by trick family.

The answers are the test corpus's (`tests/evals/adversary/`): every trick applied to every answer kind, in both
modes, where it applies. A gamed answer scored correct is the scorer fooled; an honest answer scored wrong is the
scorer too strict.

    python benchmarks/bench_scorer_adversary.py                      # the scorer imported (this checkout)
    python benchmarks/bench_scorer_adversary.py --before DIR         # and beside it the scorer of DIR

`--before DIR` scores the same corpus with the ctxprobe package found in DIR (a folder holding an older checkout
as `ctxprobe/`, e.g. `git archive <commit>` unpacked into DIR/ctxprobe), in a child process, and prints both.
Exit 1 when the scorer imported credits any gamed answer or rejects any honest one (the test asserts the same,
case by case).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives in the tests

Counts = dict[str, dict[str, int]]  # row -> {tried_gamed, credited, tried_honest, rejected}


def measure() -> tuple[Counts, Counts]:
    """(per answer kind, per trick family) the gamed answers tried and credited, the honest tried and rejected."""
    from ctxprobe.evals.scoring.score import score_sample
    from tests.evals.adversary.corpus import cases

    by_kind: dict[str, Counter[str]] = {}
    by_family: dict[str, Counter[str]] = {}
    for case in cases():
        correct = score_sample(case.sample, case.text).correct
        for table, row in ((by_kind, case.kind), (by_family, case.trick.family)):
            counts = table.setdefault(row, Counter())
            if case.trick.gamed:
                counts["tried_gamed"] += 1
                counts["credited"] += int(correct)
            else:
                counts["tried_honest"] += 1
                counts["rejected"] += int(not correct)
    return ({k: dict(v) for k, v in by_kind.items()}, {k: dict(v) for k, v in by_family.items()})


def _before(folder: Path) -> tuple[Counts, Counts]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    done = subprocess.run([sys.executable, __file__, "--json"], env=env, capture_output=True, text=True, check=True)
    kinds, families = json.loads(done.stdout)
    return kinds, families


def _cell(counts: dict[str, int] | None, key: str, tried: str) -> str:
    if counts is None:
        return "-"
    return f"{counts.get(key, 0)}/{counts.get(tried, 0)}"


def _table(title: str, after: Counts, before: Counts | None) -> None:
    width = max(len(row) for row in after) + 2
    head = f"{title:<{width}}"
    if before is not None:
        print(f"{head}{'gamed credited':>30}{'honest rejected':>30}")
        print(f"{'':<{width}}{'before':>15}{'after':>15}{'before':>15}{'after':>15}")
    else:
        print(f"{head}{'gamed credited':>16}{'honest rejected':>17}")
    rows = [*after, "total"]
    total = {
        k: sum(c.get(k, 0) for c in after.values()) for k in ("tried_gamed", "credited", "tried_honest", "rejected")
    }
    before_total = None if before is None else {k: sum(c.get(k, 0) for c in before.values()) for k in total}
    for row in rows:
        now = total if row == "total" else after[row]
        then = before_total if row == "total" else (before or {}).get(row)
        cells = [_cell(now, "credited", "tried_gamed"), _cell(now, "rejected", "tried_honest")]
        if before is not None:
            old = [_cell(then, "credited", "tried_gamed"), _cell(then, "rejected", "tried_honest")]
            print(f"{row:<{width}}{old[0]:>15}{cells[0]:>15}{old[1]:>15}{cells[1]:>15}")
        else:
            print(f"{row:<{width}}{cells[0]:>16}{cells[1]:>17}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a folder holding another ctxprobe checkout as ctxprobe/")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON (what --before reads)")
    args = parser.parse_args(argv)
    kinds, families = measure()
    if args.json:
        print(json.dumps([kinds, families]))
        return 0
    before = _before(args.before) if args.before else (None, None)
    _table("answer kind", kinds, before[0])
    _table("trick family", families, before[1])
    fooled = sum(c.get("credited", 0) + c.get("rejected", 0) for c in kinds.values())
    return 1 if fooled else 0


if __name__ == "__main__":
    raise SystemExit(main())
