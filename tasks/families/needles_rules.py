"""The answer kinds of a user's needle file (the `needles` family: `needles.py`, `needles_file.py`), scored by fixed
rules (no model): the same output gets the same score on any machine. They register here, beside the family, as
any family's own kinds do. Every comparison is on normalised text (`normalise`): Unicode NFKC, case folded,
hyphens, slashes and underscores read as spaces, other punctuation and symbols dropped, the articles `a`, `an`,
`the` dropped (SQuAD's rule), whitespace collapsed. So `**The Eiffel-Tower.**` is `eiffel tower`.

Where the rules look is the answer slot (`tasks/answers/region.py`): the first line after the answer prefix in
completions mode (the first paragraph for a `set`, which may be a list), the whole reply in chat mode, with its negated
clauses masked (`tasks/answers/polarity.py`: "It is not Paris." gives no answer).

- `exact`: the answer itself is one of the accepted answers: the region's line, its first sentence (a next one
  that starts with `or`, `maybe`, `perhaps` goes on with it), or what follows its last colon, normalised,
  equals an accepted answer normalised.
- `number`: every number in the region that the question does not itself contain is one accepted answer, as a
  number, and there is at least one: `1,234`, `1234` and `1234.0` are one number; thousands separators (`,` `_`
  and thin or no-break spaces) only in groups of three; a number written otherwise (regrouped, hyphenated, in
  words, as `1.483e3`, with an ordinal suffix: `tasks/answers/number_forms.py`) is another number offered. Another number beside it
  ("4417, 4418.", "31 flights, 1482 steps", "1482 or 1 483") is an answer offered in its place: wrong.
- `set`: every member (each accepted answer) occurs in the region as whole words, in any order, and no other
  item is offered. The items are read from each sentence that names a member, each list line and each sentence
  that is one short item alone ("Roses too."), split at commas, semicolons, `and`, `or` and `&` (a lead-in that
  ends with a colon dropped, hedges left out, a piece of pronouns and auxiliaries alone no item); an item that
  holds no member and is no longer than the longest member plus one word ("roses", "pine box") is another item:
  wrong. A longer one is prose around the list ("all planted in spring"), and so is a sentence that names no
  member (a base model runs on). Partial credit is recall times precision: the fraction of the members found
  times the share of the items offered that are members (the general kinds' rule, `evals/scoring/score.py`).
- `contains`: some accepted answer occurs in the region as whole words (for free-form answers), and the sentence
  that holds it offers no alternative to it: `or` or `either` there ("a cedar chest or a pine box", "a cedar chest.
  Or maybe a pine box.") is wrong, unless an accepted answer itself says `or`.

Before any rule, the text is read in its comparison characters (`tasks/answers/fold.py`: fullwidth forms, Cyrillic
and Greek look-alike letters), and what the answer does not assert (withdrew, denied, refused, joked about) is
dropped (`tasks/answers/polarity.py`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from ctxprobe.tasks.answers.fold import fold
from ctxprobe.tasks.answers.kinds import Scorer, answer_kind
from ctxprobe.tasks.answers.number_forms import canonical_numbers
from ctxprobe.tasks.answers.region import AnswerRegion
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.answers.words import unspaced
from ctxprobe.tasks.families.needles_file import parse_number
from ctxprobe.tasks.sample import Sample

USER_KINDS = frozenset({"exact", "number", "set", "contains"})
_ARTICLES = frozenset({"a", "an", "the"})
# a sentence that starts with an alternative ("green. Or maybe blue.") goes on from the one before
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s(?!\s*(?:or|either|maybe|perhaps|possibly)\b)", re.I)
_NUMBER = re.compile(r"(?<![\w.])[+\-\u2212]?(?:\d{1,3}(?:([,_\u00a0\u202f])\d{3})(?:\1\d{3})*|\d+)(?:\.\d+)?(?![\w])")


def normalise(text: str) -> str:
    """The comparison form of an answer (see the module's docstring)."""
    out = []
    for ch in unicodedata.normalize("NFKC", unspaced(fold(text))).casefold():
        category = unicodedata.category(ch)
        if ch in "-/_\u2010\u2011\u2012\u2013\u2014" or category.startswith("Z") or ch.isspace():
            out.append(" ")
        elif not category.startswith(("P", "S")):
            out.append(ch)
    return " ".join(w for w in "".join(out).split() if w not in _ARTICLES)


_REASONING_TAG = re.compile(r"</?think>", re.I)


def score_rule(kind: str, region: AnswerRegion, answers: list[str], question: str) -> Score:
    """Score the answer slot by the item's kind. A reasoning block's tags after the answer end a line: what it
    holds is offered on its own."""
    region = replace(
        region, lines=tuple(line for line in _REASONING_TAG.sub("\n", region.text).split("\n") if line.strip())
    )
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
    # another short answer offered alone elsewhere in the slot (a later paragraph, a fenced block) is another answer
    longest = max(len(a.split()) for a in accepted) + 1
    others = [i for i in _items(region, answers) if i not in accepted and len(i.split()) <= longest]
    extracted = (found[:1] or [s.strip() for s in spans[1:2]]) + list(dict.fromkeys(others))
    correct = bool(found) and not others
    return Score(extracted=extracted, correct=correct, partial=float(correct))


def numbers_in(text: str) -> list[float]:
    """The numbers written in `text`, in order."""
    values = (parse_number(m.group(0)) for m in _NUMBER.finditer(text))
    return [v for v in values if v is not None]


def _number(region: AnswerRegion, answers: list[str], question: str) -> Score:
    region = region.affirmed()  # a negated or withdrawn answer is not given
    asked = set(numbers_in(question))
    given = list(dict.fromkeys(v for v in numbers_in(region.text) if v not in asked))
    accepted = [v for v in (parse_number(a) for a in answers) if v is not None]
    # a number written in a disguise (`1-483`, words, `1.483e3`, `1483rd`) is another number offered, never the answer
    asked_digits = {n for n, _, _ in canonical_numbers(question)}
    disguised = [w for n, w, plain in canonical_numbers(region.text) if not plain and n not in asked_digits]
    correct = (
        bool(given)
        and not disguised
        and any(all(abs(g - a) <= 1e-9 * max(1.0, abs(a)) for g in given) for a in accepted)
    )
    return Score(extracted=[f"{g:g}" for g in given] + disguised, correct=correct, partial=float(correct))


def _has(text: str, answer: str) -> bool:
    wanted = normalise(answer)
    return bool(wanted) and f" {wanted} " in f" {text} "


_ITEM_SPLIT = re.compile(r"[,;&\u3001\uff0c\uff1b]|\b(?:and|or)\b", re.I)
# sentences; one that starts with an alternative ("tulips. Or maybe roses.") goes on from the one before
_SENTENCES = re.compile(r"(?<=[.!?;])\s+(?!(?:or|either|maybe|perhaps|possibly)\b)|\n|\u3002", re.I)
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")
# hedges around an item ("maybe roses", "lilies too"), left out of it
_HEDGES = frozenset(["also", "maybe", "perhaps", "possibly", "probably", "too", "both", "etc", "well", "as"])
# a piece of nothing but these names no item ("It was", "and so on")
_NO_ITEM = _HEDGES | frozenset(
    [
        "so",
        "on",
        "then",
        "there",
        "here",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "of",
        "in",
        "at",
        "by",
        "for",
        "to",
        "from",
        "with",
        "all",
    ]
)


def _item(piece: str) -> str:
    """A piece of a list, normalised and its hedges left out; "" where it names nothing."""
    words = normalise(piece).split()
    return "" if all(w in _NO_ITEM for w in words) else " ".join(w for w in words if w not in _HEDGES)


def _items(region: AnswerRegion, members: list[str]) -> list[str]:
    """The items the region offers, normalised: in each sentence that names a member, each list line ("- roses"),
    and each sentence that is one short item alone ("Roses too."), the pieces between commas, semicolons, `and`,
    `or` and `&`, a line's list marker and a lead-in ending with a colon that names no member dropped, hedges
    left out, a piece that names nothing (`_NO_ITEM`: "It was") no item. A sentence of prose that names no
    member offers no item (a base model runs on after its answer)."""
    longest = max(len(normalise(m).split()) for m in members) + 1
    out = []
    for line in region.lines:
        listed = bool(_LIST_MARK.match(line))
        line = _LIST_MARK.sub("", line)
        lead, colon, rest = line.rpartition(":")
        if colon and not any(_has(normalise(lead), m) for m in members):
            line = rest
        for sentence in _SENTENCES.split(line):
            pieces = [_item(p) for p in _ITEM_SPLIT.split(sentence)]
            pieces = [p for p in pieces if p]
            alone = len(pieces) == 1 and len(pieces[0].split()) <= longest
            if listed or alone or any(_has(normalise(sentence), m) for m in members):
                out += pieces
    return out


def _set(region: AnswerRegion, members: list[str]) -> Score:
    region = region.affirmed()  # a negated or withdrawn answer is not given
    text = normalise(region.text)
    found = [m for m in members if _has(text, m)]
    longest = max(len(normalise(m).split()) for m in members) + 1
    others = [i for i in _items(region, members) if not any(_has(i, m) for m in members) and len(i.split()) <= longest]
    others = list(dict.fromkeys(others))
    correct = len(found) == len(members) and not others
    recall = len(found) / len(members)
    partial = recall * len(found) / (len(found) + len(others)) if found else 0.0
    return Score(extracted=[*found, *others], correct=correct, partial=partial)


_ALTERNATIVE = re.compile(r"\b(?:or|either)\b", re.I)


def _contains(region: AnswerRegion, answers: list[str]) -> Score:
    region = region.affirmed()  # a negated or withdrawn answer is not given
    text = normalise(region.text)
    found = [a for a in answers if _has(text, a)]
    if found and not any(_ALTERNATIVE.search(a) for a in answers):  # "A or B": alternatives, not an answer
        # lines joined: an alternative on the next line or paragraph ("A.\n\nOr maybe B.") goes on from it
        held = [s for s in _SENTENCES.split(" ".join(region.lines)) if any(_has(normalise(s), a) for a in found)]
        if any(_ALTERNATIVE.search(normalise(s)) for s in held):
            return Score(extracted=found[:1], correct=False, partial=0.0)
    return Score(extracted=found[:1], correct=bool(found), partial=float(bool(found)))


def _scorer(kind: str) -> Scorer:
    def scorer(region: AnswerRegion, sample: Sample) -> Score:
        return score_rule(kind, region, sample.expected.answers, sample.question)

    return scorer


for _kind in sorted(USER_KINDS):
    answer_kind(_kind)(_scorer(_kind))
