"""The answer kind `absent`: the verdict on a question about a key the prompt holds nowhere (`tasks/absent.py`).

Correct when the answer slot says the text does not hold it (`polarity.abstention`: "The text does not
mention ...", "There is no special magic number for X in the text.", "Not found.", "I don't know") and
asserts no value of the asked kind. A value of that kind asserted, whatever else the slot says ("1234567 -
though it is not in the text", "I don't know, maybe 1234567", another needle's value quoted beside a
refusal, the value in words), is wrong, attributed `hallucinated`; where it is the value of a needle the
prompt holds, that needle's depth is kept (`rival_depth`): quoted from the context, not made up. The asked kind is the kind of the values
the prompt's needles hold (niah's 7-digit numbers, value words, UUIDs; recall's hex tokens), read as the
present questions' scorer reads them (`reading.py`: numbers in any grouping or in words, a number of the
kind's width or one digit short); what the slot does not assert ("it is not 1234567") offers nothing.

A slot with neither (silence, an echo of the question, "I'm not sure.", a number too short to be of the
kind) is wrong too, with no attribution: it named no value, so nothing was invented, and it did not say the
text lacks one. Its extracted list is empty, so one cut off by the answer budget is `truncated`, an error,
not a wrong answer (evals/scoring/truncation.py).

The slot is the present questions' (`region.py`): in chat mode the whole reply; in completions mode its
first sentence that says something the question did not, read with its own polarity (a base model runs on
after "not given." and may quote the next needle it holds: that run-on is not read)."""

from __future__ import annotations

from ctxprobe.tasks.answers.attribution import rival_values
from ctxprobe.tasks.answers.kinds import answer_kind
from ctxprobe.tasks.answers.polarity import abstention
from ctxprobe.tasks.answers.reading import candidate_kind, comparable, read
from ctxprobe.tasks.answers.region import AnswerRegion
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.sample import Sample

ABSENT = "absent"  # the answer kind of an absent question (and the parameter that asks one)
# A reply this verdict credits: the reference answer where one must be shown (an lm-eval export's target)
ABSTAINED = "The text does not mention it."


@answer_kind(ABSENT)
def score_absent(region: AnswerRegion, sample: Sample) -> Score:
    """The absent question's verdict (see the module docstring)."""
    unit = region.scoped([])
    kind = candidate_kind([n.answer for n in sample.needles])
    reading = read(unit.text, unit.unit, kind, region.frame)
    if reading.candidates:
        held = rival_values(sample, kind)
        quoted = next((held[c] for c in reading.candidates if c in held), None)
        return Score(
            extracted=reading.shown(),
            correct=False,
            partial=0.0,
            unit=unit.unit,
            attribution="hallucinated",
            rival_depth=quoted,
        )
    said = abstention(comparable(unit.text))
    return Score(extracted=[said] if said else [], correct=bool(said), partial=float(bool(said)), unit=unit.unit)
