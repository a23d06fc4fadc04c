"""The answer kinds' registry: `@answer_kind("kind")` registers the scorer of `Expected.kind == "kind"`, a
function `(region, sample) -> Score` (the answer region of the output, `tasks/answers/region.py`; the sample).

It sits in tasks, not evals, so a family registers its own kind in its own module (tasks never import evals):
the general kinds register in evals/scoring/score.py, a family's beside it (`name` in latent.py, `nodes` in
graphwalk.py, `mrcr` in mrcr.py, a needle file's rules in needles_rules.py), an outside family in its own
module, a kind alone in a module a `ctxprobe.answer_kinds` entry point names. A lookup first imports every
family module (tasks/family_index.py), so a kind registered beside its family is known wherever scoring
starts (a run, a rescore, an exported lm-eval task)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ctxprobe.tasks import family_index
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.plugins import Registry
from ctxprobe.tasks.sample import Sample

if TYPE_CHECKING:
    from ctxprobe.tasks.answers.region import AnswerRegion

__all__ = ["Scorer", "answer_kind", "check_answer_kinds", "known_answer_kinds", "scorer_for"]

Scorer = Callable[["AnswerRegion", Sample], Score]  # the answer region of a sample's output, the sample -> its score
ENTRY_POINT_GROUP = "ctxprobe.answer_kinds"  # [project.entry-points."ctxprobe.answer_kinds"] name = "module"
_SCORERS: Registry[Scorer] = Registry("answer kind", group=ENTRY_POINT_GROUP)
answer_kind = _SCORERS.register  # `@answer_kind("kind")`: the scorer of answer kind "kind" (`Expected.kind`)


def known_answer_kinds() -> list[str]:
    """Every registered kind, the families' own included."""
    family_index.discover()
    return _SCORERS.known()


def scorer_for(kind: str) -> Scorer:
    """The scorer of `kind`; an unknown kind is a one-line UserError listing the known ones."""
    family_index.discover()
    scorer = _SCORERS.find(kind)
    if scorer is None:
        raise UserError(
            f"no scorer for answer kind {kind!r}; known: {', '.join(known_answer_kinds())} "
            "(register one with @ctxprobe.answer_kind)"
        )
    return scorer


def check_answer_kinds(kinds: Iterable[str]) -> None:
    """Refuse, before anything is sent, a suite whose samples expect an answer kind no scorer knows."""
    for kind in sorted(set(kinds)):
        scorer_for(kind)
