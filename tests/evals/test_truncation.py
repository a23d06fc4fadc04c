"""A cut-off answer is not a wrong answer: `cut_off` on real SmolLM2-135M-Instruct chat replies cut at
niah's completions budget of 20 tokens (fixtures/smollm2_chat/cut_at_20_tokens.json), and on made-up cuts
of each shape: inside a value, before any value, a list stopped short; a complete wrong value stays wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.records.record import ErrorKind, Response
from ctxprobe.evals.run.send.loop import record_of
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.evals.scoring.truncation import cut_off
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe, Sample

CUT = json.loads((Path(__file__).parent / "fixtures" / "smollm2_chat" / "cut_at_20_tokens.json").read_text())


def _reply(text: str, finish: str = "length", tokens: int = 20, reasoning: str | None = None) -> Response:
    return Response(endpoint="http://x", text=text, finish_reason=finish, completion_tokens=tokens, reasoning=reasoning)


def _independent_verdict(text: str, finish: str, value: str) -> str:
    """The rule written out again, for numbers: cut (length) while the last digit run is a strict prefix of the
    value, or before any digits at all, is truncated; the value itself is correct; anything else is wrong."""
    import re

    runs = re.findall(r"\d+", text)
    if value in runs:
        return "correct"
    if finish == "length":
        ends = re.search(r"(\d+)\W*$", text)
        if (
            ends
            and value.startswith(ends.group(1))
            and len(ends.group(1)) < len(value)
            and not re.search(r"\d[.,;:!?)]\W*$", text)
        ) or not runs:
            return "truncated"
    return "wrong"


def test_real_replies_cut_inside_the_number_are_truncated_and_none_is_wrong() -> None:
    verdicts = []
    for item in CUT["replies"]:
        sample = Sample.model_validate(item["sample"])
        response = _reply(item["text"], item["finish_reason"], item["completion_tokens"])
        record = record_of(sample, response, None, None, 1, max_tokens=20)
        got = "truncated" if record.error is ErrorKind.truncated else "correct" if record.score.correct else "wrong"
        assert got == _independent_verdict(item["text"], item["finish_reason"], sample.expected.answers[0]), item[
            "text"
        ]
        verdicts.append(got)
    # the capture: every reply named the needle's number or was cut while writing it
    assert verdicts.count("wrong") == 0
    assert verdicts.count("truncated") == 11 and verdicts.count("correct") == 7


def _sample(family: str = "niah", **params: object) -> Sample:
    return build_sample(Recipe(family=family, params=dict(params), context_tokens=600, depth=50, mode="chat"))


def test_each_shape_of_cut() -> None:
    niah = _sample()
    value = niah.expected.answers[0]
    verdict = lambda s, text, **kw: cut_off(s, _reply(text, **kw), score_sample(s, text))  # noqa: E731
    assert verdict(niah, f"The number is {value[:4]}") is not None  # inside the value
    assert verdict(niah, f"The number is **{value[:4]}") is not None  # inside markdown
    assert verdict(niah, "The special magic number for the key mentioned in the") is not None  # before a value
    assert verdict(niah, f"The number is {value[:4]}", finish="stop") is None  # the model stopped: wrong
    assert verdict(niah, f"The number is {value[:4]}. It is") is None  # a finished wrong value
    wrong = str((int(value) + 1) % 10_000_000).zfill(7)
    assert verdict(niah, f"The number is {wrong}, which") is None  # complete and wrong, cut after it
    assert verdict(niah, f"The number is {value[:3]}9") is None  # already wrong while written
    assert verdict(niah, "", reasoning="I need to find the number", tokens=20) is not None  # still reasoning

    uuid = _sample(value_kind="uuid")
    assert verdict(uuid, f"It is {uuid.expected.answers[0][:13]}") is not None
    hexes = _sample("recall", kind="hex")
    assert verdict(hexes, f"The string is `{hexes.expected.answers[0][:10]}") is not None
    assert verdict(hexes, f"The string is {'0' * 40}. Done") is None

    many = _sample(variant="multivalue", values=3)
    first, second = many.expected.answers[:2]
    assert verdict(many, f"The numbers are {first}, {second}, and") is not None  # a list stopped short
    assert verdict(many, f"The numbers are {first}, {second}, 1234567 and then") is None  # complete, one wrong


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_a_correct_answer_cut_after_it_stays_correct(finish: str) -> None:
    niah = _sample()
    text = f"The special magic number is {niah.expected.answers[0]}. This number appears in"
    record = record_of(niah, _reply(text, finish=finish), None, None, 1, max_tokens=20)
    assert record.error is None and record.score is not None and record.score.correct


def test_in_completions_a_cut_after_the_answer_slot_ended_is_judged() -> None:
    # Gemma on quick's recall hex: a wrong value on its line, then a run-on sentence cut inside its value
    hexes = build_sample(Recipe(family="recall", params={"kind": "hex", "length": 32}, context_tokens=600, depth=50))
    gold = hexes.expected.answers[0]
    wrong = gold[:-1]  # one digit short: complete, and wrong
    verdict = lambda text: cut_off(hexes, _reply(text), score_sample(hexes, text))  # noqa: E731
    ran_on = f" {wrong}.\n\nThe access token for gentle-locket mentioned in the provided text is {gold[:1]}"
    assert verdict(ran_on) is None  # the slot (its first line) ended: judged, and wrong
    record = record_of(hexes, _reply(ran_on, tokens=48), None, None, 1, max_tokens=48)
    assert record.error is None and record.score is not None and not record.score.correct
    assert verdict(f" {gold[:9]}") is not None  # cut inside the slot's own line: cut off
    assert verdict(f" {gold[:9]}\n") is None  # its line ended: what follows is not read
    # a list's slot is its paragraph: a cut on its next line is still inside it
    many = build_sample(
        Recipe(family="niah", params={"variant": "multivalue", "values": 3}, context_tokens=600, depth=50)
    )
    first, second = many.expected.answers[:2]
    listed = lambda text: cut_off(many, _reply(text), score_sample(many, text))  # noqa: E731
    assert listed(f" {first}\n{second}\n") is not None  # two of three, the paragraph still open
    assert listed(f" {first}\n{second}\n\nThe numbers for the key are 12") is None  # the paragraph ended
