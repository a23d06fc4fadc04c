"""Scoring one sample's output against its `Expected`: strict on the answer, plus partial credit.

A sample is correct only when the answer names the expected value(s) and nothing else of their kind: no
rival candidate (`tasks/answers/rivals.py`: another value of the expected shape, another needle's answer) outside
the question's own words, and no expected value credited where the answer negates it (`tasks/answers/negation.py`:
negated clauses are masked before anything is looked for). Where the answer is looked for: the answer region
(`tasks/answers/region.py`), in completions mode its first informative sentence (and, for a list, the next ones
while they name expected values), in chat mode its first paragraph.

Partial credit is recall times precision: the share of the expected values named times the share of the
values named that are expected (the square of the Fowlkes-Mallows index). Not F1: with nothing invented F1
would raise an honest partial answer's credit (2 of 4 values: F1 0.67, recall 0.5), while recall x precision
is then the recall, as before, and falls with every guess added (4 of 4 values and 6 made up: 0.4).

The general answer kinds, registered here:

- `value`: the expected value, as whole tokens; `16462207` is not `6462207`. Partial: 1 / (1 + rivals).
- `values`: each expected value as whole tokens; partial = recall x precision over the values.
- `string`: verbatim (outer quotes, backticks, bold and one trailing period allowed), or standing whole in
  the answer line; partial = edit similarity to the best-matching extracted span x precision.
- `any`: `string` for each of the answers (QA's alternatives); the best counts.
- `chain`: correct iff the final answer is given (the chain's own hops are not rivals); partial = j/len(chain)
  for the furthest hop j named x the share of the names and values given that are on the chain.

A family's own kinds register beside the family (tasks/answers/kinds.py, the registry): `name` (latent.py: the
character, and no other listed name), `nodes` (graphwalk.py: GraphWalks' rule, F1 partial, exact set), `mrcr`
(mrcr.py: MRCR's rule, the hash first, then SequenceMatcher's ratio), and a needle file's `exact`, `number`,
`set`, `contains` (needles_rules.py), all under tasks/families. `score_sample` looks the kind up.
"""

from __future__ import annotations

import re

# check_answer_kinds is read from here, where the general kinds are registered
from ctxprobe.tasks.answers.fold import fold
from ctxprobe.tasks.answers.kinds import answer_kind, check_answer_kinds, scorer_for  # noqa: F401
from ctxprobe.tasks.answers.region import AnswerRegion, answer_region, answer_sentence, candidates
from ctxprobe.tasks.answers.tokens import find_tokens, is_cjk, norm, norm_tokens, shape
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.sample import Sample

_WRAPPERS = (("**", "**"), ("__", "__"), ("```", "```"), ("`", "`"), ('"', '"'), ("'", "'"),
             ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("*", "*"), ("_", "_"))
_DELIMITERS = frozenset("\"'`*\u201c\u201d\u2018\u2019")
# Chinese text puts no space around a value: a CJK character, or a full-width mark, delimits it too
_CJK_BEFORE = frozenset("\uff1a\u300c\u300e\uff08\u3001\uff0c")  # ：「『（、，
_CJK_AFTER = frozenset("\u3002\uff0c\uff1b\u300d\u300f\uff09\u3001\uff01\uff1f")  # 。，；」』）、！？
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|\u201c([^\u201d]+)\u201d|\*\*(.+?)\*\*")


def score_sample(sample: Sample, text: str) -> Score:
    """Score a model's raw output (the continuation in completions mode, the message in chat mode)."""
    return scorer_for(sample.expected.kind)(answer_region(sample, text), sample)


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


def _score_value(region: AnswerRegion, expected: str) -> Score:
    region = region.affirmed().scoped([expected])
    kind = shape(expected)
    given = _has(region.text, expected)
    rivals = region.offered_rivals()
    if given:
        extracted = [expected if kind == "text" else norm(expected), *rivals]
    else:
        extracted = candidates(answer_sentence(region, kind, expected), kind, expected, region.excluded) or rivals
    return Score(extracted=extracted, correct=given and not rivals,
                 partial=recall_times_precision(int(given), 1, len(rivals)))


def _score_values(region: AnswerRegion, expected: list[str]) -> Score:
    region = region.affirmed().scoped(expected)
    text = region.text
    found = [v for v in expected if _has(text, v)]
    rivals = region.offered_rivals()
    extracted = [*found, *rivals] or candidates(text, shape(expected[0]), expected[0], region.excluded)
    return Score(extracted=extracted, correct=len(found) == len(expected) and not rivals,
                 partial=recall_times_precision(len(found), len(expected), len(rivals)))


def _score_chain(region: AnswerRegion, chain: list[str]) -> Score:
    # The whole answer region, not one sentence: an answer that walks the chain hop by hop names the end in
    # its last sentence; a keychain answer that names a key instead of the value still earns its hop. The
    # asked chain's hops are not rivals; anything else of the final answer's shape is.
    region = region.affirmed().scoped(chain)
    hay = norm_tokens(region.text)
    reached = [j for j, hop in enumerate(chain, 1) if find_tokens(norm_tokens(hop), hay) >= 0]
    rivals = region.offered_rivals()
    if reached:
        extracted = sorted((chain[j - 1] for j in reached), key=lambda h: find_tokens(norm_tokens(h), hay)) + rivals
    else:
        extracted = candidates(answer_sentence(region, "text", chain[-1]), "text", chain[-1], region.excluded)
    final = bool(reached) and reached[-1] == len(chain)
    furthest = max(reached, default=0) / len(chain)
    named = len(reached)
    precision = named / (named + len(rivals)) if named else 0.0
    return Score(extracted=extracted, correct=final and not rivals, partial=furthest * precision)


def _score_string(region: AnswerRegion, expected: str) -> Score:
    region = region.affirmed().scoped([expected])
    rivals = region.offered_rivals()
    target = _drop_period(fold(expected).strip())  # the region is read in its comparison characters
    spans = [s for line in region.lines for s in _spans(line, bare=not re.search(r"\s", target))]
    if any(_drop_period(s) == target for s in spans) or any(_stands_whole(target, line) for line in region.lines):
        return Score(extracted=[expected.strip(), *rivals], correct=not rivals, partial=1.0 / (1 + len(rivals)))
    best, best_sim = "", -1.0
    for span in spans:
        text = _drop_period(span)
        longest = max(len(text), len(target))
        if longest and 1.0 - abs(len(text) - len(target)) / longest <= best_sim:
            continue  # cannot beat the best: the length difference alone costs more
        sim = similarity(text, target)
        if sim > best_sim:
            best, best_sim = span, sim
    offered = " ".join(norm_tokens(best))
    others = [r for r in rivals if r not in offered]  # the best span is what was offered, not a rival of itself
    return Score(extracted=[best, *others] if best else others, correct=False,
                 partial=max(best_sim, 0.0) / (1 + len(others)))


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
            not after or after.isspace() or after in _DELIMITERS or after in _CJK_AFTER or is_cjk(after)
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
