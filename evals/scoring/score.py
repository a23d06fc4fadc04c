"""Scoring one sample's output against its `Expected`: strict on the answer, plus partial credit.

One path for every general kind: the answer slot (`tasks/answers/region.py`: chat, the whole reply; completions,
the first informative sentence after the answer prefix, and for a list each next one naming a value) -> the
candidates of the asked kind in one canonical form, with what the slot does not assert blanked first
(`tasks/answers/reading.py`, `tasks/answers/polarity.py`) -> correct only when the candidates are exactly the
expected values, each written plainly at least once (a value only spelled out or regrouped is a rival of
itself). The question's and the answer prefix's own candidates are not offered ones. The score states the
unit read (`Score.unit`).

Partial credit is recall times precision over the same candidates: the share of the expected values named
times the share of the values named that are expected (the square of the Fowlkes-Mallows index). Not F1: with
nothing invented F1 would raise an honest partial answer's credit (2 of 4 values: F1 0.67, recall 0.5), while
recall x precision is then the recall, as before, and falls with every guess added (4 of 4 values and 6 made up:
0.4).

The general answer kinds, registered here:

- `value`: the expected value is the one candidate. Partial: 1 / (1 + other candidates).
- `values`: the candidates are the expected values; partial = recall x precision.
- `string`: a string of a kind (hex token, UUID, `return` line) as `value`, partial the edit similarity of the
  closest candidate as written over the candidates; free text (a contract clause) verbatim (outer quotes,
  backticks, bold and one trailing period allowed) with no number beside it that the text does not hold.
- `any`: `string` for each of the answers (QA's alternatives); the best counts.
- `chain`: correct iff the final answer is a candidate and every other candidate is on the chain (a keychain's
  other keys are candidates too); partial = j/len(chain) for the furthest hop j named x the share of the hops
  and candidates given that are on the chain.

A family's own kinds register beside the family (tasks/answers/kinds.py, the registry): `name` (latent.py: the
character, and no other listed name, read by the same path), `nodes` (graphwalk.py: GraphWalks' rule on the
last line, F1 partial, exact set), `mrcr` (mrcr.py: MRCR's rule, the hash first, then SequenceMatcher's ratio),
and a needle file's `exact`, `number`, `set`, `contains` (needles_rules.py, on the same slot and polarity), all
under tasks/families. `score_sample` looks the kind up.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ctxprobe.tasks.answers.attribution import ATTRIBUTED_KINDS, attribute

# check_answer_kinds is read from here, where the general kinds are registered
from ctxprobe.tasks.answers.kinds import answer_kind, check_answer_kinds, scorer_for  # noqa: F401
from ctxprobe.tasks.answers.reading import CandidateKind, Reading, candidate_kind, comparable
from ctxprobe.tasks.answers.region import AnswerRegion, answer_region, answer_sentence, candidates, reading_of
from ctxprobe.tasks.answers.tokens import find_tokens, is_cjk, norm_tokens, shape
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.sample import Sample

_WRAPPERS = (
    ("**", "**"),
    ("__", "__"),
    ("```", "```"),
    ("`", "`"),
    ('"', '"'),
    ("'", "'"),
    ("\u201c", "\u201d"),
    ("\u2018", "\u2019"),
    ("*", "*"),
    ("_", "_"),
)
_DELIMITERS = frozenset("\"'`*\u201c\u201d\u2018\u2019")
# Chinese text puts no space around a value: a CJK character, or a full-width mark, delimits it too
_CJK_BEFORE = frozenset("\uff1a\u300c\u300e\uff08\u3001\uff0c")  # ：「『（、，
_CJK_AFTER = frozenset("\u3002\uff0c\uff1b\u300d\u300f\uff09\u3001\uff01\uff1f")  # 。，；」』）、！？
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|\u201c([^\u201d]+)\u201d|\*\*(.+?)\*\*")


def score_sample(sample: Sample, text: str) -> Score:
    """Score a model's raw output (the continuation in completions mode, the message in chat mode); the score
    states the unit read (`unit`) where the kind's scorer read the answer slot, and what a wrong answer named
    (`attribution`: another needle of its prompt, or none, `tasks/answers/attribution.py`)."""
    region = answer_region(sample, text)
    score = scorer_for(sample.expected.kind)(region, sample)
    if score.unit is None:
        unit = region.unit if region.chat or sample.expected.kind not in _SCOPED else region.scoped([]).unit
        score = score.model_copy(update={"unit": unit})
    return attribute(sample, region, score)


_SCOPED = ATTRIBUTED_KINDS  # read in the documented unit's sentences (the kinds attributed)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions, each 1), two-row dynamic programme.
    Written here rather than taken from difflib: SequenceMatcher.ratio() is a different measure
    (matching blocks, 2*M/T) and its autojunk heuristic changes results on strings over 200 chars."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similarity(a: str, b: str) -> float:
    """1 - Levenshtein(a, b) / max(len(a), len(b)); 1.0 for two empty strings."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def _extracted(reading: Reading, region: AnswerRegion, kind: CandidateKind, expected: list[str]) -> list[str]:
    """What the record shows as extracted: the candidates asserted (an expected one as the sample writes it), or
    where there is none, the words the unit says beyond the question's (what was offered instead)."""
    shown = reading.shown([kind.canonical(v) for v in expected], expected)
    if shown:
        return shown
    said = replace(region, lines=tuple(reading.asserted_text.split("\n")))
    return candidates(
        answer_sentence(said, shape(expected[0]), expected[0]), shape(expected[0]), expected[0], region.excluded
    )


def _score_value(region: AnswerRegion, expected: str) -> Score:
    return _score_values(region, [expected])


def _score_values(region: AnswerRegion, expected: list[str]) -> Score:
    kind = candidate_kind(expected)
    reading = reading_of(region, expected, kind)
    wanted = list(dict.fromkeys(kind.canonical(v) for v in expected))
    found, others = reading.offers(wanted)
    return Score(
        extracted=_extracted(reading, region, kind, expected),
        correct=len(found) == len(wanted) and not others,
        partial=recall_times_precision(len(found), len(wanted), len(others)),
    )


def _score_chain(region: AnswerRegion, chain: list[str]) -> Score:
    # An answer that walks the chain hop by hop names the end last; a keychain answer that names a key instead
    # of the value still earns its hop. The asked chain's hops are not rivals; any other candidate of the final
    # answer's kind (and, for a keychain, any other key) is.
    kind = candidate_kind(chain[-1:])
    reading = reading_of(region, chain, kind)
    final, others = reading.offers([kind.canonical(chain[-1])])
    others = [c for c in others if c not in {kind.canonical(h) for h in chain}]
    if len(chain) > 1 and (hop_kind := candidate_kind(chain[:-1])) != kind:  # keychain: the keys on the way
        _, other_keys = reading_of(region, chain[:-1], hop_kind).offers([hop_kind.canonical(h) for h in chain])
        others += other_keys
    hay = norm_tokens(reading.asserted_text)
    reached = [
        j
        for j, hop in enumerate(chain, 1)
        if find_tokens(norm_tokens(hop), hay) >= 0 or kind.canonical(hop) in reading.plain
    ]
    furthest = max(reached, default=0) / len(chain)
    named = len(reached)
    precision = named / (named + len(others)) if named else 0.0
    return Score(
        extracted=_extracted(reading, region, kind, chain),
        correct=bool(final) and not others,
        partial=furthest * precision,
    )


def _score_string(region: AnswerRegion, expected: str) -> Score:
    """A string of a kind (a hex token, a UUID, a `return` line) by its candidates, partial credit the edit
    similarity of the closest one as written; free text (a contract clause, a QA answer) stated verbatim, with
    no number beside it that the expected text does not hold."""
    kind = candidate_kind([expected])
    reading = reading_of(region, [expected], kind)
    if kind.shape != "text":
        score = _score_values(region, [expected])
        if score.correct:
            return score
        if not reading.candidates:  # nothing of its kind: how close the words offered come
            return _closest(replace(region, lines=tuple(reading.asserted_text.split("\n"))), expected, kind, set())
        target = expected.strip()
        sims = [similarity(w, target) for w in reading.written]
        best = max(range(len(sims)), key=sims.__getitem__)
        return Score(extracted=score.extracted, correct=False, partial=sims[best] / len(sims))
    numbers = set(kind.candidates(comparable(expected)))
    affirmed = replace(region, lines=tuple(reading.asserted_text.split("\n")))
    target = _drop_period(comparable(expected).strip())
    spans = [s for line in affirmed.lines for s in _spans(line, bare=not re.search(r"\s", target))]
    if any(_drop_period(s) == target for s in spans) or any(_stands_whole(target, line) for line in affirmed.lines):
        others = [c for c in reading.candidates if c not in numbers]
        return Score(extracted=[expected.strip(), *others], correct=not others, partial=1.0 / (1 + len(others)))
    return _closest(affirmed, expected, kind, numbers, reading.candidates)


def _closest(
    affirmed: AnswerRegion, expected: str, kind: CandidateKind, numbers: set[str], offered: tuple[str, ...] = ()
) -> Score:
    """A wrong free-text answer: the span closest to `expected` (edit similarity), over one plus the numbers
    offered beside it."""
    target = _drop_period(comparable(expected).strip())
    spans = [s for line in affirmed.lines for s in _spans(line, bare=not re.search(r"\s", target))]
    best, best_sim = "", -1.0
    for span in spans:
        text = _drop_period(span)
        longest = max(len(text), len(target))
        if longest and 1.0 - abs(len(text) - len(target)) / longest <= best_sim:
            continue  # cannot beat the best: the length difference alone costs more
        sim = similarity(text, target)
        if sim > best_sim:
            best, best_sim = span, sim
    attempted = set(kind.candidates(best)) | numbers  # a number inside the closest span is part of the attempt
    others = [c for c in offered if c not in attempted]
    return Score(
        extracted=[best, *others] if best else others, correct=False, partial=max(best_sim, 0.0) / (1 + len(others))
    )


def recall_times_precision(found: int, expected: int, invented: int) -> float:
    """Partial credit: the fraction of the expected values recalled times the fraction of the values
    offered that are expected (0 when nothing expected was offered)."""
    if found == 0 or expected == 0:
        return 0.0
    return (found / expected) * (found / (found + invented))


def _has(text: str, value: str) -> bool:
    return find_tokens(norm_tokens(value), norm_tokens(text)) >= 0


def _unwrap(text: str) -> str:
    """Strip outer whitespace, a trailing comma, and matching outer quotes/backticks/bold, repeatedly."""
    previous = None
    while text != previous:
        previous = text
        text = text.strip()
        if text[-1:] in ",." and text[-2:-1] in {w[1][-1] for w in _WRAPPERS}:
            text = text[:-1]
        for left, right in _WRAPPERS:
            if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : -len(right)]
                break
    return text


def _spans(line: str, bare: bool) -> list[str]:
    """Extracted spans of one answer line: the whole line, what follows its last colon, quoted or
    bold parts and, for an expected string without spaces, each whitespace-separated word."""
    out = [_unwrap(line)]
    if ": " in line:
        out.append(_unwrap(line.rsplit(": ", 1)[1]))
    if "\uff1a" in line:  # a full-width colon (Chinese)
        out.append(_unwrap(line.rsplit("\uff1a", 1)[1]))
    out += [_unwrap(next(g for g in m.groups() if g)) for m in _QUOTED.finditer(line)]
    if bare:
        out += [_unwrap(w) for w in line.split()]
    return [s for s in dict.fromkeys(out) if s]


def _stands_whole(target: str, line: str) -> bool:
    """`target` occurs in `line` delimited: before it a space, a quote, `*` or the line start; after it
    a space, a quote, `*`, the line end, or `.`/`,` that ends a sentence or clause; in Chinese text a
    CJK character or a full-width mark on either side. So `0x<hex>`, `<hex>0` and `f(x))` for `f(x)` are
    not the expected string."""
    start = line.find(target) if target else -1
    while start >= 0:
        end = start + len(target)
        before, after, next_ = line[start - 1 : start], line[end : end + 1], line[end + 1 : end + 2]
        if (not before or before.isspace() or before in _DELIMITERS or before in _CJK_BEFORE or is_cjk(before)) and (
            not after
            or after.isspace()
            or after in _DELIMITERS
            or after in _CJK_AFTER
            or is_cjk(after)
            or (after in ".," and (not next_ or next_.isspace() or next_ in _DELIMITERS))
        ):
            return True
        start = line.find(target, start + 1)
    return False


def _drop_period(text: str) -> str:
    return text[:-1] if text.endswith((".", "\u3002")) else text


# The built-in answer kinds' scorers (tasks/family.py lists them).
@answer_kind("value")
def _value(region: AnswerRegion, sample: Sample) -> Score:
    return _score_value(region, sample.expected.answers[0])


@answer_kind("values")
def _values(region: AnswerRegion, sample: Sample) -> Score:
    return _score_values(region, sample.expected.answers)


@answer_kind("string")
def _string(region: AnswerRegion, sample: Sample) -> Score:
    return _score_string(region, sample.expected.answers[0])


@answer_kind("any")
def _any(region: AnswerRegion, sample: Sample) -> Score:
    return max((_score_string(region, a) for a in sample.expected.answers), key=lambda s: (s.correct, s.partial))


@answer_kind("chain")
def _chain(region: AnswerRegion, sample: Sample) -> Score:
    return _score_chain(region, sample.expected.chain or sample.expected.answers)
