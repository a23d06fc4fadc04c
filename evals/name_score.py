"""Scoring a `name` answer (the latent family's): the character's name, and no other name in its place.

The rivals are every name of the family's name list: an answer region (`evals/extract.py`) that names the
character and another listed name as well ("Yuki or Megan") offers a second answer and is wrong, as is one
that names only another character. Names are whole tokens, case-folded (`Yukiko` is not `Yuki`)."""

from __future__ import annotations

from ctxprobe.evals.extract import AnswerRegion, find_tokens, norm_tokens
from ctxprobe.evals.log.record import Score
from ctxprobe.tasks.families.latent_table import character_names


def score_name(region: AnswerRegion, expected: str) -> Score:
    """Correct iff the region names `expected` and no other listed name; partial is the same as correct."""
    hay = norm_tokens(region.text)
    listed = dict.fromkeys([*character_names(), expected])
    named = sorted((n for n in listed if find_tokens(norm_tokens(n), hay) >= 0),
                   key=lambda n: find_tokens(norm_tokens(n), hay))
    correct = named == [expected]
    return Score(extracted=named, correct=correct, partial=float(correct))
