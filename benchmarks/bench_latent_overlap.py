"""The latent family's lexical overlap over its whole shipped table: every association, with each of its
hops and both needle directions, as a latent needle and as its literal control.

The overlap is NoLiMa's figure, ROUGE-1 precision of the question against the needle over content words
(`tasks/families/latent_table.py`); a latent sample above `MAX_LATENT_OVERLAP` is refused when it is built.

    python benchmarks/bench_latent_overlap.py

Prints the distribution per cue (value: count), by kind and hops, and PASS when no latent question shares a
content word with its needle.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ctxprobe.tasks.families.latent import MAX_LATENT_OVERLAP, latent_sentences
from ctxprobe.tasks.families.latent_table import associations, character_names, lexical_overlap


def main() -> int:
    name = character_names()[0]
    by: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for row in associations():
        for hops in (1, 2):
            if not row.asked(hops):
                continue
            for direction in ("default", "inverted"):
                for cue in ("latent", "literal"):
                    needle, question = latent_sentences(row, name, hops, direction, cue)
                    by[(cue, row.kind, hops)].append(lexical_overlap(question, needle))
    print(
        f"associations: {len(associations())}; names: {len(character_names())}; threshold (latent): "
        f"overlap <= {MAX_LATENT_OVERLAP}"
    )
    for cue in ("latent", "literal"):
        values = [v for (c, _, _), vs in by.items() if c == cue for v in vs]
        hist = ", ".join(f"{v:.2f}: {n}" for v, n in sorted(Counter(round(v, 2) for v in values).items()))
        print(
            f"{cue}: {len(values)} needle/question pairs, mean {sum(values) / len(values):.3f}, max "
            f"{max(values):.2f}; {hist}"
        )
        for (c, kind, hops), vs in sorted(by.items()):
            if c == cue:
                print(f"  {kind:9s} hops {hops}: n {len(vs):3d}, mean {sum(vs) / len(vs):.3f}, max {max(vs):.2f}")
    latent_max = max(v for (c, _, _), vs in by.items() if c == "latent" for v in vs)
    verdict = "PASS" if latent_max <= MAX_LATENT_OVERLAP else "FAIL"
    print(f"{verdict}: the largest latent overlap is {latent_max:.2f} (threshold {MAX_LATENT_OVERLAP})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
