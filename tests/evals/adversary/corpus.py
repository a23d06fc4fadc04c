"""The corpus: every trick (`tricks.py`, `formatted.py`) on every kind it applies to (`kinds.py`), both modes."""

from __future__ import annotations

from dataclasses import dataclass

from ctxprobe.tasks.sample import Sample
from tests.evals.adversary.disguises import DISGUISES
from tests.evals.adversary.formatted import MRCR, NODES
from tests.evals.adversary.kinds import FORMATTED, KINDS, expected
from tests.evals.adversary.tricks import CHAIN, TRICKS, Trick


@dataclass(frozen=True)
class Case:
    """One answer tried: the kind, its sample, the trick, the text, and the verdict it must get."""

    kind: str
    sample: Sample
    trick: Trick
    text: str

    @property
    def correct(self) -> bool:
        return self.trick.correct


# Honest answers a kind refuses by its own rule, not by a trick: a needle file's `exact` is the answer itself (no
# sentence around it: "No wait, it is green." is a sentence), and its `contains` has no rival shape, so a list of
# candidates (or a rival alone in a later block) there is an answer the rule cannot tell from prose (`contains`
# refuses only "A or B"); a contract
# clause has commas of its own, so a negation ("X, not <another clause>") reaches only its first one.
NOT_TRIED: dict[str, set[str]] = {
    "exact": {
        "echo of the target needle",
        "states it in a sentence",
        "repeats the question",
        "value in a code block",
        "normal sentence",
        "rival, no wait: X",
        "doubt, then the value",
        "I think it is X",
        "a closing offer of help",
    },
    "contains": {
        "lists candidates",
        "everything in the prompt",
        "X, I mean rival",
        "X, then a fenced rival after a blank line",
        "X, then a reasoning block naming a rival",
        "X with a reasoning block naming a rival",
    }
    | {f"lists a rival {label}" for label, _, _ in DISGUISES},
}


def _skipped(kind_params: dict[str, object], sample: Sample, trick: Trick) -> bool:
    if trick.label in NOT_TRIED.get(sample.expected.kind, set()):
        return True
    if trick.label == "rejects a rival" and kind_params.get("kind") == "clause":
        return True
    has_rivals = sample.recipe.family != "needles" and any(  # a needle file's needles hold no other answer
        n.answer not in expected(sample) + sample.expected.answers for n in sample.needles
    )
    if trick.label == "everything in the prompt" and not has_rivals:
        return True
    return trick.label == "echo of the target needle" and (not sample.needles or kind_params.get("kind") == "code")


def cases() -> list[Case]:
    """Every (kind, sample, trick, answer) the adversary tries."""
    out = []
    for kind in KINDS:
        sample = kind.sample()
        chain = kind.family == "multihop" and kind.params["kind"] != "vartrack"
        for trick in TRICKS + (CHAIN if chain else []):
            if not _skipped(kind.params, sample, trick) and (text := trick.answer(sample)):
                out.append(Case(kind.label, sample, trick, text))
    for kind in FORMATTED:
        sample = kind.sample()
        for trick in NODES if kind.family == "graphwalk" else MRCR:
            if text := trick.answer(sample):
                out.append(Case(kind.label, sample, trick, text))
    return out
