"""Scoring a `name` answer (the latent family's): the character's name, and no other name in its place.

The rivals are every name of the family's name list: an answer region (`evals/extract.py`) that names the
character and another listed name as well ("Yuki or Megan") offers a second answer and is wrong, as is one
that names only another character. Names are whole tokens, case-folded (`Yukiko` is not `Yuki`). An answer
that names no listed character extracts its other words, so that it reads as wrong, not as cut off."""

from __future__ import annotations

from ctxprobe.evals.extract import AnswerRegion, candidates, find_tokens, norm_tokens
from ctxprobe.evals.log.record import Score
from ctxprobe.tasks.families.latent_table import character_names


def score_name(region: AnswerRegion, expected: str) -> Score:
    """Correct iff the region names `expected` and no other listed name; partial is the same as correct."""
    hay = norm_tokens(region.text)
    listed = dict.fromkeys([*character_names(), expected])
    named = sorted((n for n in listed if find_tokens(norm_tokens(n), hay) >= 0),
                   key=lambda n: find_tokens(norm_tokens(n), hay))
    correct = named == [expected]
    # No listed name: what was said instead (a complete answer that names nobody is wrong, not cut off)
    extracted = named or candidates(region.text, "text", expected, region.excluded)
    return Score(extracted=extracted, correct=correct, partial=float(correct))
