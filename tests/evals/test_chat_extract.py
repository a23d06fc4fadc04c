"""The extractor on chat answers: numbers, words, uuids, hex strings and code lines pulled out of a
sentence, markdown (bold, backticks, a list, a code fence), a repeated question and a trailing
explanation; and every real SmolLM2-135M-Instruct chat reply captured in fixtures/smollm2_chat/ scored
as an independent reading of it says (the value standing whole in the reply, or not)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe, Sample

FIXTURES = Path(__file__).parent / "fixtures" / "smollm2_chat"
SHAPES = [
    "{v}",
    "**{v}**",
    "The answer is `{v}`.",
    "- {v}",
    "1. {v}",
    "Sure! The value you asked for is **{v}**.",
    "{q}\n\nThe value is {v}.",  # the question repeated first
    "{q}\n\n**{v}**",
    "{v}\n\nThis value appears in the text exactly once, in the middle of the passage.",  # an explanation after it
    "Answer: {v}. It was mentioned in the provided text as the one asked for.",
    "Here it is:\n\n```\n{v}\n```\n\nThat is the exact value.",
]
TASKS = [
    ("niah", {"value_kind": "number"}, "prose"),
    ("niah", {"value_kind": "word"}, "prose"),
    ("niah", {"value_kind": "uuid"}, "prose"),
    ("recall", {"kind": "hex"}, "prose"),
    ("recall", {"kind": "uuid"}, "prose"),
    ("recall", {"kind": "code"}, "code"),
]


def _sample(family: str, params: dict[str, object], haystack: str) -> Sample:
    return build_sample(
        Recipe(family=family, params=params, haystack=haystack, context_tokens=900, depth=50, mode="chat")
    )


@pytest.mark.parametrize("family, params, haystack", TASKS)
@pytest.mark.parametrize("shape", SHAPES)
def test_chat_shapes_give_the_value(family: str, params: dict[str, object], haystack: str, shape: str) -> None:
    sample = _sample(family, params, haystack)
    value = sample.expected.answers[0]
    score = score_sample(sample, shape.format(v=value, q=sample.question))
    assert score.correct, (shape, score.extracted)


@pytest.mark.parametrize("family, params, haystack", TASKS)
def test_a_near_miss_in_a_sentence_stays_wrong(family: str, params: dict[str, object], haystack: str) -> None:
    sample = _sample(family, params, haystack)
    value = sample.expected.answers[0]
    near = "1" + value if value[:1].isdigit() else value[:-1] + ("x" if value[-1] != "x" else "y")
    assert not score_sample(sample, f"{sample.question}\n\nThe value is **{near}**.").correct


def _captured() -> list[dict[str, object]]:
    found = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        found += [
            {**reply, "file": path.name}
            for reply in data["replies"]
            if reply["finish_reason"] == "stop" or data["captured_with"]["max_tokens"] > 20
        ]
    return found


def _stands_whole(value: str, text: str) -> bool:
    """Independent reading: the value occurs with no letter or digit joined to either side."""
    return re.search(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", text) is not None


def test_captured_smollm2_chat_replies_are_scored_as_they_read() -> None:
    replies = _captured()
    assert replies
    for reply in replies:
        sample = Sample.model_validate(reply["sample"])
        if sample.expected.kind not in ("value", "string"):
            continue
        text = str(reply["text"])
        score = score_sample(sample, text)
        assert score.correct == _stands_whole(sample.expected.answers[0], text), (reply["file"], text)
