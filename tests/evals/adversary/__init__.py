"""The adversary corpus: answers written to game the scorer, and honest ones, generated per answer kind and trick
family, in both modes, each with the verdict it must get (`corpus.cases`). Built on real samples, so the rivals are
the prompt's own. Kept apart from the test so `benchmarks/bench_scorer_adversary.py` prints the same table."""
