"""The scorer against answers written to game it: how many of them it still scores correct, by trick.

The answers are the test corpus's (`tests/evals/adversary_cases.py`): every trick applied to every answer kind, in
both modes, where it applies. A gamed answer scored correct is the scorer fooled; an honest answer (the value
alone, in a sentence, a rival rejected, a self-correction to the value) scored wrong is the scorer too strict.

    python benchmarks/bench_scorer_adversary.py

Prints one row per trick: the gamed answers scored correct of those tried (and the kinds that were fooled), then
the honest answers scored wrong, and the totals. Exit 1 when any gamed answer scores correct or any honest one
wrong (the test asserts the same, case by case).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from ctxprobe.evals.scoring.score import score_sample

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives in the tests
from tests.evals.adversary_cases import cases, is_gamed  # noqa: E402


def main() -> int:
    tried: dict[str, int] = defaultdict(int)
    missed: dict[str, list[str]] = defaultdict(list)
    for kind, sample, label, text, correct in cases():
        tried[label] += 1
        if score_sample(sample, text).correct is not correct:
            missed[label].append(kind)
    width = max(len(label) for label in tried)
    for gamed, title in ((True, "gamed answers scored correct"), (False, "honest answers scored wrong")):
        labels = [label for label in tried if is_gamed(label) is gamed]
        print(f"{title}:")
        for label in labels:
            kinds = "; ".join(missed[label])
            fooled = f"  ({kinds})" if kinds else ""
            print(f"  {label:<{width}}  {len(missed[label]):>3} of {tried[label]:>3}{fooled}")
        wrong, total = sum(len(missed[label]) for label in labels), sum(tried[label] for label in labels)
        print(f"  {'total':<{width}}  {wrong:>3} of {total:>3}")
    return 1 if any(missed.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
