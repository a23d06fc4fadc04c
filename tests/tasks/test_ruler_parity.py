"""RULER parity for the needle tasks: a `template: ruler` prompt is RULER's prompt apart from the haystack
filler, on every haystack the `ruler` suite uses. The reference is built by lm-eval's own RULER code
(`lm_eval/tasks/ruler/prepare_niah.py`, `niah_utils.TEMPLATE`): `noise:ruler` against RULER's `repeat`
haystack, `prose` and `noise` against RULER's `essay` haystack fed with the same haystack's words (RULER reads
Paul Graham's essays from the hub; its sentence splitter, nltk's punkt, is a download, so the test splits
sentences at their periods, which is what punkt does with this text).

With keys and values masked, the frame is compared: the instruction, the text between it and the context,
each needle with the separator before it, the question with the answer prefix and the separator before them.
What lies between filler sentences (one line per noise block, a paragraph break in prose) is the filler's."""

from __future__ import annotations

import random
import re
from typing import NamedTuple

import pytest

from ctxprobe.tasks.build import builder_for, haystack, token_counter
from ctxprobe.tasks.haystack.noise import RulerNoiseHaystack
from tests.tasks.word_tokenizer import WordTokenizer

NEEDLE = re.compile(r"One of the special magic \w+ for (\S+) is: (\S+)\.")
# ctxprobe niah variant -> RULER's needle counts (num_needle_k, num_needle_v, num_needle_q)
VARIANTS = {
    "single": ({}, (1, 1, 1)),
    "multikey": ({"distractors": 3}, (4, 1, 1)),
    "multivalue": ({"values": 4}, (1, 4, 1)),
    "multiquery": ({"queries": 4}, (4, 1, 4)),
}
# ctxprobe haystack -> RULER's haystack type
HAYSTACKS = {"noise:ruler": "repeat", "noise": "essay", "prose": "essay"}


class Frame(NamedTuple):
    instruction: str
    opening: str  # between the instruction and the context
    needles: list[tuple[str, str]]  # (separator before, masked needle), in order
    closing: str  # between the context and the question
    tail: str  # the question and the answer prefix


def masked(prompt: str) -> str:
    keys, values = set(), set()
    for key, value in NEEDLE.findall(prompt):
        keys.add(key)
        values.add(value)
    for text in sorted(keys | values, key=len, reverse=True):
        prompt = prompt.replace(text, "KEY" if text in keys else "VALUE")
    return prompt


def frame_of(prompt: str) -> Frame:
    text = masked(prompt)
    instruction, rest = text.split("\n", 1)
    opening = "\n" + rest[: len(rest) - len(rest.lstrip())]
    start = text.rindex("\nWhat ")
    context = text[:start].rstrip()
    closing = text[len(context) : start + 1]
    needle = re.compile(r"(\s*)(One of the special magic \w+ for KEY is: VALUE\.)")
    needles = [(m.group(1), m.group(2)) for m in needle.finditer(text, len(instruction))]
    return Frame(instruction, opening, needles, closing, text[start + 1 :])


def split_sentences(text: str) -> list[str]:
    """Sentences ending in a period, as punkt splits ctxprobe's filler (no abbreviations, no digits)."""
    return [sentence.strip() for sentence in re.findall(r"[^.]+\.", text)]


def ruler_prompt(variant: str, hay: str, monkeypatch: pytest.MonkeyPatch) -> str:
    prepare = pytest.importorskip("lm_eval.tasks.ruler.prepare_niah", reason="lm-eval's ruler extra is not installed")
    niah_utils = pytest.importorskip("lm_eval.tasks.ruler.niah_utils", reason="transformers is not installed")
    monkeypatch.setattr(prepare, "cached_sent_tokenize", split_sentences)
    kind = HAYSTACKS[hay]
    if kind == "repeat":
        filler = prepare.get_haystack(type_haystack="repeat")
    else:  # RULER's essay haystack: the text's words, whitespace collapsed
        filler = " ".join(haystack(hay).units(0, 400)).split()
    _, (k, v, q) = VARIANTS[variant]
    random.seed(7)
    [doc] = prepare.generate_samples(
        filler,
        TOKENIZER=WordTokenizer(),
        max_seq_length=900,
        type_haystack=kind,
        type_needle_k="words",
        type_needle_v="numbers",
        template=niah_utils.TEMPLATE,
        num_samples=1,
        num_needle_k=k,
        num_needle_v=v,
        num_needle_q=q,
    )
    return doc["input"] + " " + doc["gen_prefix"]  # lm-eval joins them with the target delimiter " "


def ctxprobe_prompt(variant: str, hay: str, depth: float = 50.0, mode: str = "completions") -> str:
    params, _ = VARIANTS[variant]
    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="niah",
        params={"variant": variant, "template": "ruler", **params},
        haystack=hay,
        context_tokens=1024,
        depth=depth,
        seed=0,
        mode=mode,
    )
    return builder.build(recipe).prompt


@pytest.mark.parametrize("hay", sorted(HAYSTACKS))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_ruler_template_matches_lm_evals_ruler_prompt(variant: str, hay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ruler, ours = frame_of(ruler_prompt(variant, hay, monkeypatch)), frame_of(ctxprobe_prompt(variant, hay))
    k, v, _ = VARIANTS[variant][1]
    assert ours.instruction == ruler.instruction
    assert ours.opening == ruler.opening == "\n"
    assert ours.closing == ruler.closing == "\n"
    assert ours.tail == ruler.tail
    assert sorted(ours.needles) == sorted(ruler.needles) and len(ours.needles) == k * v


@pytest.mark.parametrize("hay", sorted(HAYSTACKS))
def test_a_needle_at_depth_zero_opens_the_context_on_rulers_line(hay: str) -> None:
    prompt = ctxprobe_prompt("single", hay, depth=0.0)
    assert re.search(r"afterwards\.\nOne of the special magic numbers for \S+ is: \d+\.\s+\S", prompt)


def test_the_noise_ruler_context_is_rulers_repeat_haystack() -> None:
    prompt = ctxprobe_prompt("single", "noise:ruler")
    lines = masked(prompt).split("\n")[1:-1]
    block = RulerNoiseHaystack.BLOCK.strip()
    assert all(line == block or NEEDLE.fullmatch(line.replace("KEY", "k-k").replace("VALUE", "1")) for line in lines)


@pytest.mark.parametrize("hay", ["prose", "noise"])
def test_the_opening_keeps_the_planned_length_exact(hay: str) -> None:
    """The first piece is counted with RULER's opening, not with the separator it had in the haystack (a
    counter of one token per character is exactly additive, and `\\n` is one token shorter than `\\n\\n`)."""
    from ctxprobe.tasks.build import PromptBuilder
    from ctxprobe.tasks.token_counter import EstimateCounter, count

    counter = EstimateCounter(1.0)
    builder = PromptBuilder(counter)
    for depth in (0.0, 50.0):
        recipe = builder.recipe(
            family="niah", params={"template": "ruler"}, haystack=hay, context_tokens=2048, depth=depth, seed=1
        )
        sample = builder.build(recipe)
        assert sample.planned_tokens == count(counter, sample.prompt)
        assert sample.planned_tokens <= 2048
        for spot in sample.needles:
            assert sample.prompt[spot.char_offset :].startswith(spot.text)
