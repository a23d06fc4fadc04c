"""Where the question stands: after the document (`end`, every family's own layout), before it (`start`,
NeedleBench's "Start"), or both. One rewrite of a family's draft, applied by the builder, so every family
has all three with the same needles (`question_position` is a layout parameter).

The question moves with the gap that stood before it in the tail; what followed it there stays in the
tail: the answer prefix in completions mode (a base model still continues it), the request for the answer
alone in chat mode (RULER's chat layout has neither, so there the prompt ends with the document). At
`start` the document opens after the same gap, whatever its first unit's own separator; in a family whose
head holds the document (aggregate, qa) the question goes where the family says the document starts. What it does to a prefix cache: at `end` every question on one haystack shares the haystack as
its prefix; at `start` or `both` the prompts part at the question, before the haystack."""

from __future__ import annotations

from dataclasses import replace

from ctxprobe.tasks.common_params import QuestionPosition
from ctxprobe.tasks.registry import Draft


def place_question(draft: Draft, position: QuestionPosition) -> Draft:
    """The draft with its question at `position`; `end` is the draft itself."""
    if position == "end":
        return draft
    at = draft.tail.rfind(draft.question)
    if not draft.question or at < 0:
        raise ValueError(f"the tail {draft.tail!r} does not hold the question {draft.question!r}")
    gap, after = draft.tail[:at], draft.tail[at + len(draft.question) :]
    opening = draft.context_opening
    if draft.document_start is None:  # the haystack follows the head
        head = f"{draft.head}{gap}{draft.question}"
        opening = gap if opening is None else opening
    else:
        cut = draft.document_start
        head = f"{draft.head[:cut]}{gap}{draft.question}{draft.head[cut:]}"
    tail = draft.tail if position == "both" else gap + after.lstrip() if after.strip() else ""
    return replace(draft, head=head, tail=tail, context_opening=opening)
