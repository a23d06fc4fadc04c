"""How every family frames its question: completions mode ends with an answer prefix for base models,
chat mode asks for the answer alone."""

from __future__ import annotations

from ctxprobe.tasks.registry import Draft, NeedleDraft
from ctxprobe.tasks.sample import Expected, Mode


def frame(head: str, question: str, prefix: str, mode: Mode, needles: tuple[NeedleDraft, ...],
          expected: Expected, max_tokens: int, unique: tuple[str, ...] = ()) -> Draft:
    if mode == "completions":
        tail = f"\n\n{question}\n\n{prefix}"
    else:
        tail = f"\n\n{question} Answer with the answer only."
        prefix = ""
    return Draft(head=head, tail=tail, question=question, answer_prefix=prefix, needles=needles,
                 expected=expected, max_tokens=max_tokens, unique=unique)


def join_names(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
