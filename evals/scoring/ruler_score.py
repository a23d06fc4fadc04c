"""RULER's own score, kept beside ctxprobe's exact one: `string_match_all`, the fraction of the expected
answers found in the output as substrings, any case (recall only: `16462207` counts for `6462207`, and a
list of every word in the context names the 10 common ones). A run records it for every sample written in
RULER's layout (`template: ruler`), and `import-lm-eval` for RULER's own logs, as `ruler_substring`."""

from __future__ import annotations

from ctxprobe.tasks.sample import Sample

SUBSTRING = "ruler_substring"


def ruler_substring(output: str, answers: list[str]) -> float:
    """RULER's `string_match_all` for one output: the fraction of answers found as substrings, any case."""
    return sum(a.lower() in output.lower() for a in answers) / len(answers)


def ruler_references(sample: Sample, output: str) -> dict[str, float]:
    """{`ruler_substring`: RULER's score} for a sample in RULER's layout; {} for any other."""
    if sample.recipe.params.get("template") != "ruler" or not sample.expected.answers:
        return {}
    return {SUBSTRING: ruler_substring(output, sample.expected.answers)}
