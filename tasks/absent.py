"""Absent needles: a question, in the very words of a present one, for a key the prompt holds nowhere.

Recall measures whether a model finds what is there; an absent question measures whether it invents what is
not (Michelangelo's IDK tasks, OneRULER's absent needle). A family whose needles map a key to a value of a
kind (niah's numbers, words and UUIDs; recall's hex tokens and record ids) takes `absent: true`: the prompt
holds the needles the same recipe without it holds (they are drawn from `needle_key`, which leaves `absent`
out, and every one is then a distractor), and its question is the question of another draw of the family, whose keys are drawn apart from the prompt's and from its haystack.
Families whose answer is not a value of a kind (recall's code and clauses, multi-hop chains, aggregates,
the latent family's names) have no such parameter: a reply to them offers no value a scorer could call
invented.

- Independent layout: the other draw is the recipe's own (`tasks/build.py: absent_question_draw`); the
  needles and the haystack's start are the present cell's (the haystack is fit to the length around the
  prompt's own question, so its end may differ), and the depth sweep shares its prefix as before.
- Nested layout (`tasks/nested.py`): the question of a key of the same chain that this length's prompt does
  not reach (a longer length's needle, past this length's cut), else one of the chain's spare draws, drawn
  apart from every cell and the chain's haystack; the context is already cached, so an absent question costs
  only the question.

The expected answer is `Expected(kind="absent", answers=[])`, scored by `tasks/answers/absence.py`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import Field

from ctxprobe.tasks.answers.absence import ABSENT  # its scorer registers with it, wherever a family asks one
from ctxprobe.tasks.draft import Draft
from ctxprobe.tasks.sample import Expected

__all__ = ["ABSENT", "absent_draft", "absent_field", "asked_keys", "asks_absent"]


def absent_field() -> Any:
    """A family's `absent` parameter."""
    return Field(
        False,
        description="ask, in the words of a present question, for a key the prompt holds "
        "nowhere: correct only when the reply says the text does not hold it and gives no value",
    )


def asks_absent(params: Any) -> bool:
    """Whether a family's parameters (a model or a dict) ask an absent question."""
    value = params.get(ABSENT) if isinstance(params, dict) else getattr(params, ABSENT, False)
    return bool(value)


def asked_keys(draft: Draft) -> tuple[str, ...]:
    """The keys a draft's question asks for: its unique strings that its tail names."""
    return tuple(key for key in draft.unique if key in draft.tail)


def absent_draft(present: Draft, asking: Draft) -> Draft:
    """`present`'s prompt (head, needles, all distractors now) with `asking`'s question: the keys it asks
    must stand nowhere in the prompt (the caller draws them apart); `unique` holds them, so the builder's
    check that unique strings occur only where placed also checks the haystack holds none."""
    return replace(
        present,
        tail=asking.tail,
        question=asking.question,
        answer_prefix=asking.answer_prefix,
        needles=tuple(replace(n, role="distractor") for n in present.needles),
        expected=Expected(kind=ABSENT, answers=[]),
        max_tokens=asking.max_tokens,
        unique=tuple(dict.fromkeys((*present.unique, *asked_keys(asking)))),
    )
