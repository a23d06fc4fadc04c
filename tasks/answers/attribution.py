"""What a wrong answer named: another needle of its prompt (a rival), or none of its prompt's needles.

A prompt of the nested layout holds the needles of every cell of its chain that falls inside it (the same
frame, another key and value), and an independent sample may hold distractor needles. A wrong answer that
is one of those values was read from the context at the wrong place: the model confused two needles, it did
not lose the context. One that names no needle of its prompt (another number, nothing, a refusal) is `other`.

Decided when the sample is scored, while its needles are in hand, and kept on the score (`Score.attribution`,
`Score.rival_depth`: the named needle's depth in this prompt, %): tables and reports count it from record
outlines, which carry no needles. The answer is read as its scorer reads it (the same slot and unit, the
candidates in their canonical form, `region.reading_of`); a kind whose answers are free text (a clause, a QA
answer) or a family's own rule has no candidates to compare and stays unattributed (None)."""

from __future__ import annotations

from ctxprobe.tasks.answers.reading import CandidateKind, candidate_kind
from ctxprobe.tasks.answers.region import AnswerRegion, reading_of
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.sample import Sample

# The general answer kinds (evals/scoring/score.py), read by candidates of one kind in the documented unit's
# sentences: their wrong answers are attributed. One set, which the scorer reads too.
ATTRIBUTED_KINDS = frozenset({"value", "values", "string", "any", "chain"})


def rival_values(sample: Sample, kind: CandidateKind | None = None) -> dict[str, float]:
    """Each value of another needle of the sample's prompt (role `distractor`: a distractor, or another cell's
    needle in the nested layout), canonical in `kind` (default: the kind of the expected answers), with its
    depth (%) in this prompt; the first in the prompt where two share a value. The asked needle's own values
    (its target and hops) are never rivals."""
    kind = kind or candidate_kind(sample.expected.answers)
    own = {kind.canonical(v) for v in [*sample.expected.answers, *sample.expected.chain]}
    rivals: dict[str, float] = {}
    for needle in sorted(sample.needles, key=lambda n: n.token_offset):
        value = kind.canonical(needle.answer)
        if needle.role == "distractor" and value not in own:
            rivals.setdefault(value, needle.depth_pct)
    return rivals


def attribute(sample: Sample, region: AnswerRegion, score: Score) -> Score:
    """`score` with its wrong answer attributed: `rival` (and the rival's depth) where a candidate the slot
    asserts is another needle's value, else `other`. A correct answer, one already attributed (an absent
    needle's `hallucinated`), and a kind without candidates are returned as they are."""
    if score.correct or score.attribution is not None or sample.expected.kind not in ATTRIBUTED_KINDS:
        return score
    kind = candidate_kind(sample.expected.answers)
    if kind.shape == "text":
        return score
    rivals = rival_values(sample)
    reading = reading_of(region, sample.expected.chain or sample.expected.answers, kind)
    named = next((c for c in reading.candidates if c in rivals), None)
    if named is None:
        return score.model_copy(update={"attribution": "other"})
    return score.model_copy(update={"attribution": "rival", "rival_depth": rivals[named]})
