"""The answer kinds of a user's needle file (the `needles` family: `needles.py`, `needles_file.py`), scored by fixed
rules (no model): the same output gets the same score on any machine. They register here, beside the family, as
any family's own kinds do. Every comparison is on normalised text (`normalise`): Unicode NFKC, case folded,
hyphens, slashes and underscores read as spaces, other punctuation and symbols dropped, the articles `a`, `an`,
`the` dropped (SQuAD's rule), whitespace collapsed. So `**The Eiffel-Tower.**` is `eiffel tower`.

Where the rules look is the answer region (`tasks/answers/region.py`): the first line after the answer prefix in
completions mode, the first paragraph in chat mode (and for a `set`, which may be a list), with its negated
clauses masked (`tasks/answers/negation.py`: "It is not Paris." gives no answer).

- `exact`: the answer itself is one of the accepted answers: the region's line, its first sentence, or
  what follows its last colon, normalised, equals an accepted answer normalised.
- `number`: the first number in the region that the question does not itself contain equals an accepted
  answer as a number: `1,234`, `1234` and `1234.0` are one number; thousands separators (`,` `_` and thin
  or no-break spaces) only in groups of three; number words are not read.
- `set`: every member (each accepted answer) occurs in the region as whole words, in any order; partial
  credit is the fraction found.
- `contains`: some accepted answer occurs in the region as whole words (for free-form answers).
"""

from __future__ import annotations

import re
import unicodedata

from ctxprobe.tasks.answers.kinds import Scorer, answer_kind
from ctxprobe.tasks.answers.region import AnswerRegion
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.families.needles_file import parse_number
from ctxprobe.tasks.sample import Sample

USER_KINDS = frozenset({"exact", "number", "set", "contains"})
_ARTICLES = frozenset({"a", "an", "the"})
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s")
_NUMBER = re.compile(r"(?<![\w.])[+\-\u2212]?(?:\d{1,3}(?:([,_\u00a0\u202f])\d{3})(?:\1\d{3})*|\d+)(?:\.\d+)?(?![\w])")


def normalise(text: str) -> str:
    """The comparison form of an answer (see the module's docstring)."""
    out = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        category = unicodedata.category(ch)
        if ch in "-/_\u2010\u2011\u2012\u2013\u2014" or category.startswith("Z") or ch.isspace():
            out.append(" ")
        elif not category.startswith(("P", "S")):
            out.append(ch)
    return " ".join(w for w in "".join(out).split() if w not in _ARTICLES)


def score_rule(kind: str, region: AnswerRegion, answers: list[str], question: str) -> Score:
    """Score the answer region by the item's kind."""
    if kind == "exact":
        return _exact(region, answers)
    if kind == "number":
        return _number(region, answers, question)
    if kind == "set":
        return _set(region, answers)
    return _contains(region, answers)


def _exact(region: AnswerRegion, answers: list[str]) -> Score:
    region = region.affirmed()  # a negated answer is not given
    accepted = {normalise(a) for a in answers}
    spans = []
    for line in region.lines:
        spans += [line, _SENTENCE_END.split(line, maxsplit=1)[0]]
        if ": " in line:
            spans.append(line.rsplit(": ", 1)[1])
    found = [s.strip() for s in spans if normalise(s) in accepted]
    extracted = found[:1] or [s.strip() for s in spans[1:2]]
    return Score(extracted=extracted, correct=bool(found), partial=float(bool(found)))


def numbers_in(text: str) -> list[float]:
    """The numbers written in `text`, in order."""
    values = (parse_number(m.group(0)) for m in _NUMBER.finditer(text))
    return [v for v in values if v is not None]


def _number(region: AnswerRegion, answers: list[str], question: str) -> Score:
    region = region.affirmed()  # a negated answer is not given
    asked = set(numbers_in(question))
    given = [v for v in numbers_in(region.text) if v not in asked]
    accepted = [v for v in (parse_number(a) for a in answers) if v is not None]
    correct = bool(given) and any(abs(given[0] - a) <= 1e-9 * max(1.0, abs(a)) for a in accepted)
    return Score(extracted=[f"{given[0]:g}"] if given else [], correct=correct, partial=float(correct))


def _has(text: str, answer: str) -> bool:
    wanted = normalise(answer)
    return bool(wanted) and f" {wanted} " in f" {text} "


def _set(region: AnswerRegion, members: list[str]) -> Score:
    region = region.affirmed()  # a negated answer is not given
    text = normalise(region.text)
    found = [m for m in members if _has(text, m)]
    return Score(extracted=found, correct=len(found) == len(members), partial=len(found) / len(members))


def _contains(region: AnswerRegion, answers: list[str]) -> Score:
    region = region.affirmed()  # a negated answer is not given
    text = normalise(region.text)
    found = [a for a in answers if _has(text, a)]
    return Score(extracted=found[:1], correct=bool(found), partial=float(bool(found)))


def _scorer(kind: str) -> Scorer:
    def scorer(region: AnswerRegion, sample: Sample) -> Score:
        return score_rule(kind, region, sample.expected.answers, sample.question)

    return scorer


for _kind in sorted(USER_KINDS):
    answer_kind(_kind)(_scorer(_kind))
