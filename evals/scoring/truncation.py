"""Whether a wrong answer is only a cut-off one.

A chat model answers in a sentence ("The special magic number for noble-satchel mentioned in the provided
text is 8038428."); with too small an answer budget the engine stops for `length` in the middle of the
value, the extractor finds `8038`, and the sample would read as wrong for a model that found the needle.
Such a sample cannot be judged: it is an error (`truncated`), never a wrong answer. What counts as cut
off, when the engine stopped for length and the answer is not correct:

- the text ends inside an expected value: its last token is a strict prefix of one (`8038` of `8038428`);
- no value was given yet (nothing extracted: a sentence, or reasoning, still being written);
- a list of values stopped before it held as many values as were asked.

A complete wrong value stays wrong, even when more text after it was cut off; in completions mode nothing cut
after the answer slot ended (its line, or its paragraph for a list: `region.slot_closed`) makes an answer
cut off, since it is not read (" c21…78.\n\nThe access token for K is c" is judged, not cut). A `name` answer (the latent
family's) is cut off only when the budget ended it inside its answer region (`_name_cut_off`)."""

from __future__ import annotations

import re

from ctxprobe.evals.records.record import Response, Score
from ctxprobe.tasks.answers.region import slot_closed
from ctxprobe.tasks.sample import Sample

_TRAILING_MARKUP = re.compile(r"[\s*_`\"'\u201c\u201d\u2018\u2019]+$")


def cut_off(sample: Sample, response: Response, score: Score) -> str | None:
    """Why the answer counts as cut off before it was complete, or None when it is judged as it stands."""
    if sample.expected.kind == "name":
        return _name_cut_off(sample, response, score)
    if response.finish_reason != "length" or score.correct or slot_closed(sample, response.text):
        return None
    expected = (
        sample.expected.chain[-1:]
        if sample.expected.kind == "chain" and sample.expected.chain
        else sample.expected.answers
    )
    inside = _ends_inside(response.text, expected)
    if inside is not None:
        return f"the answer stopped inside a value ({inside!r})"
    if not score.extracted:
        return "it stopped before giving a value" + (
            " (still reasoning)" if response.reasoning and not response.text.strip() else ""
        )
    if sample.expected.kind == "values" and len(score.extracted) < len(expected):
        return f"it stopped after {len(score.extracted)} of {len(expected)} values"
    return None


def _ends_inside(text: str, expected: list[str]) -> str | None:
    """The end of `text` when it is a strict prefix of an expected value, starting where a word starts."""
    body = _TRAILING_MARKUP.sub("", text)
    if not body or body[-1] in ".,;:!?)":
        return None  # the value, if any, was finished
    for value in expected:
        goal = value.strip()
        for size in range(min(len(goal) - 1, len(body)), 0, -1):
            start = len(body) - size
            piece = body[start:]
            if start > 0 and body[start - 1].isalnum():
                continue  # the value would start inside a word
            if _same(piece, goal[:size]):
                return piece
    return None


def _same(piece: str, prefix: str) -> bool:
    """Equal as the scorer compares them: case folded, thousands separators in a number dropped."""
    if piece[:1].isdigit():
        piece = piece.replace(",", "")
    return piece.casefold() == prefix.casefold()


def _name_cut_off(sample: Sample, response: Response, score: Score) -> str | None:
    """Why a wrong `name` answer counts as cut off: the budget ran out before its answer region ended (the
    first line in completions mode, the first paragraph in chat mode). Once that region is complete, what the
    budget cut later is not read, so it cannot make the answer right."""
    if response.finish_reason != "length" or score.correct:
        return None
    body = response.text.strip()
    if ("\n\n" if sample.recipe.mode == "chat" else "\n") in body:
        return None
    return "it stopped before its answer line ended"
