"""What the judge model is asked, and how its reply is read. The rubric asks for one JSON object
`{"verdict": "correct" | "incorrect", "reason": "..."}`; a reply that holds none, or a bare first word
CORRECT / INCORRECT, is read as that, and anything else is a judge error (never a guess at a verdict)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ctxprobe.tasks.answers.region import answer_region, strip_reasoning
from ctxprobe.tasks.sample import Sample

RUBRIC = (
    "You grade answers to questions about a document. Compare the model's answer with the accepted answers. "
    "The answer is correct when it states the same fact as one of the accepted answers, in any wording "
    "(for a set: every member, in any order); it is incorrect when it states another fact, hedges between "
    "several, or gives none. Reply with one JSON object and nothing else: "
    '{"verdict": "correct" or "incorrect", "reason": "one short sentence"}.'
)
_RULES = {
    "exact": "one of the accepted answers",
    "number": "the same number as an accepted answer",
    "set": "every member of the set",
    "contains": "one of the accepted answers",
}
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
_BARE = re.compile(r"^[\W_]*(correct|incorrect)\b", re.I)
REPLY_TOKENS = 128


def judge_messages(sample: Sample, output: str) -> list[dict[str, str]]:
    """The chat messages that ask the judge about one answer: the question, the accepted answers and what
    the model answered (its answer region, after the answer prefix it continued)."""
    region = answer_region(sample, output).text
    answer = f"{sample.answer_prefix} {region}".strip() if sample.answer_prefix else region
    accepted = " | ".join(sample.expected.answers)
    wanted = _RULES.get(sample.expected.kind, "one of the accepted answers")
    user = (
        f"Question: {sample.question}\nAccepted answers: {accepted}\nA correct answer gives: {wanted}\n"
        f"Model's answer: {answer or '(nothing)'}\n\nYour JSON verdict:"
    )
    return [{"role": "system", "content": RUBRIC}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Reading:
    verdict: str | None  # correct | incorrect | None
    reason: str
    error: str | None


def read_reply(text: str) -> Reading:
    """The verdict a judge's reply gives, or the error that it gives none."""
    body = strip_reasoning(text).strip()
    for match in _OBJECT.finditer(body):
        try:
            data: Any = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        verdict = str(data.get("verdict", "")).strip().lower() if isinstance(data, dict) else ""
        if verdict in ("correct", "incorrect"):
            return Reading(verdict, str(data.get("reason", ""))[:500], None)
    bare = _BARE.match(body)
    if bare:
        return Reading(bare.group(1).lower(), "", None)
    return Reading(None, "", "unparsed reply: no verdict in it")
