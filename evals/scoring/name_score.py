"""Scoring a `name` answer (the latent family's): the character's name, and no other name in its place.

The rivals are every name of the family's name list: an answer region (`evals/scoring/extract.py`) that names the
character and another listed name as well ("Yuki or Megan") offers a second answer and is wrong, as is one
that names only another character. A negated name ("not Yuki", "isn't Megan"; `evals/scoring/negation.py`) is neither
credited nor a rival. Names are whole tokens, case-folded (`Yukiko` is not `Yuki`). An answer
that names no listed character extracts its line as said; it is cut off (an error) only when the budget ended
it before that line did (`name_cut_off`)."""

from __future__ import annotations

from ctxprobe.evals.scoring.extract import AnswerRegion, find_tokens, norm_tokens
from ctxprobe.evals.records.record import Response, Score
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.families.latent_table import character_names


def score_name(region: AnswerRegion, expected: str) -> Score:
    """Correct iff the region names `expected` and no other listed name; partial is the same as correct."""
    hay = norm_tokens(region.affirmed().text)  # what the answer offers: its negated clauses masked
    listed = dict.fromkeys([*character_names(), expected])
    named = sorted((n for n in listed if find_tokens(norm_tokens(n), hay) >= 0),
                   key=lambda n: find_tokens(norm_tokens(n), hay))
    correct = named == [expected]
    # No listed name: the answer line as said ("Dante Alighieri.", the question's own words, names nobody)
    extracted = named or list(region.lines[:1])
    return Score(extracted=extracted, correct=correct, partial=float(correct))


def name_cut_off(sample: Sample, response: Response, score: Score) -> str | None:
    """Why a wrong `name` answer counts as cut off: the budget ran out before its answer region ended (the
    first line in completions mode, the first paragraph in chat mode). Once that region is complete, what the
    budget cut later is not read, so it cannot make the answer right."""
    if response.finish_reason != "length" or score.correct:
        return None
    body = response.text.strip()
    if ("\n\n" if sample.recipe.mode == "chat" else "\n") in body:
        return None
    return "it stopped before its answer line ended"
