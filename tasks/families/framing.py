"""How every family frames its question: completions mode ends with an answer prefix for base models,
chat mode asks for the answer alone."""

from __future__ import annotations

from typing import Literal

from ctxprobe.tasks.registry import Draft, NeedleDraft
from ctxprobe.tasks.sample import Expected, Mode


Template = Literal["ctxprobe", "ruler"]
RULER_GENERATION_TOKENS = 128  # RULER's nominal length includes this many generated tokens


def frame(head: str, question: str, prefix: str, mode: Mode, needles: tuple[NeedleDraft, ...],
          expected: Expected, max_tokens: int, unique: tuple[str, ...] = (), template: Template = "ctxprobe",
          length_convention: str = "prompt") -> Draft:
    """ctxprobe's layout: `\\n\\n{question}\\n\\n{prefix}`. RULER's (lm-eval's `ruler` tasks): the
    question on the line after the haystack and the answer prefix after one space, `\\n{question} {prefix}`
    (chat: `\\n{question}` alone, as lm-eval sends it)."""
    if template == "ruler":
        tail = f"\n{question} {prefix}" if mode == "completions" else f"\n{question}"
    elif mode == "completions":
        tail = f"\n\n{question}\n\n{prefix}"
    else:
        tail = f"\n\n{question} Answer with the answer only."
    if mode != "completions":
        prefix = ""
    reserve = RULER_GENERATION_TOKENS if length_convention == "ruler" else 0
    return Draft(head=head, tail=tail, question=question, answer_prefix=prefix, needles=needles,
                 expected=expected, max_tokens=max_tokens, unique=unique, reserve_tokens=reserve)


def join_names(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
