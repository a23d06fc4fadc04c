"""Scoring an `mrcr` answer by OpenAI MRCR's published rule: the response must start with the random string
to prepend, else it scores 0; otherwise the partial credit is difflib's SequenceMatcher ratio of the rest
against the expected answer with its string removed. Correct is an exact reproduction (the string and the
answer, nothing before or after, surrounding whitespace aside).

Reasoning blocks are dropped first. In completions mode the transcript goes on after the answer: the
response is read up to the transcript's next turn (`\\n\\nUser:`), and the space a base model writes after
`Assistant:` is not part of it. `Expected.answers` holds the expected response (string and answer) and the
string alone."""

from __future__ import annotations

from difflib import SequenceMatcher

from ctxprobe.evals.scoring.extract import strip_reasoning
from ctxprobe.evals.records.record import Score
from ctxprobe.tasks.sample import Sample

NEXT_TURN = "\n\nUser:"


def mrcr_ratio(response: str, answer: str, prepend: str) -> float:
    """MRCR's grade: 0 without the string at the start, else SequenceMatcher's ratio of what follows it."""
    if not response.startswith(prepend):
        return 0.0
    return float(SequenceMatcher(None, response.removeprefix(prepend), answer.removeprefix(prepend)).ratio())


def score_mrcr(sample: Sample, text: str) -> Score:
    answer, prepend = sample.expected.answers[0], sample.expected.answers[1]
    response = strip_reasoning(text)
    if sample.recipe.mode == "completions":
        response = response.split(NEXT_TURN, 1)[0].lstrip(" ")
    ratio = mrcr_ratio(response, answer, prepend)
    return Score(extracted=[response[: len(answer) + 40]], correct=response.strip() == answer.strip(), partial=ratio)
