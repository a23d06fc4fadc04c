"""RULER parity: a `template: ruler` prompt is RULER's prompt apart from the haystack filler. The reference
is built by lm-eval's own RULER code (`lm_eval/tasks/ruler/prepare_niah.py`, `niah_utils.TEMPLATE`) with
the repeated-noise haystack (lm-eval's `ruler` extra); both texts are compared line by line with keys and values masked: the
instruction, the needle lines, the question and the answer prefix must match exactly, and every other line
must be RULER's noise block."""

from __future__ import annotations

import random
import re

import pytest

from ctxprobe.tasks.build import builder_for, token_counter
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


def masked_lines(prompt: str) -> list[str]:
    keys, values = set(), set()
    for key, value in NEEDLE.findall(prompt):
        keys.add(key)
        values.add(value)
    for text in sorted(keys | values, key=len, reverse=True):
        prompt = prompt.replace(text, "KEY" if text in keys else "VALUE")
    return prompt.split("\n")


def frame(lines: list[str]) -> tuple[str, list[str], str]:
    """(instruction, needle lines in order, question + answer prefix); asserts the rest is filler."""
    middle = lines[1:-1]
    block = RulerNoiseHaystack.BLOCK.strip()
    needles = [line for line in middle if line != block]
    assert all(NEEDLE.fullmatch(n.replace("KEY", "k-k").replace("VALUE", "1")) for n in needles), needles
    return lines[0], needles, lines[-1]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_ruler_template_matches_lm_evals_ruler_prompt(variant: str) -> None:
    prepare = pytest.importorskip("lm_eval.tasks.ruler.prepare_niah", reason="lm-eval's ruler extra is not installed")
    niah_utils = pytest.importorskip("lm_eval.tasks.ruler.niah_utils", reason="transformers is not installed")
    template = niah_utils.TEMPLATE
    params, (k, v, q) = VARIANTS[variant]
    random.seed(7)
    [doc] = prepare.generate_samples(prepare.get_haystack(type_haystack="repeat"), TOKENIZER=WordTokenizer(),
                                     max_seq_length=900, type_haystack="repeat", type_needle_k="words",
                                     type_needle_v="numbers", template=template, num_samples=1,
                                     num_needle_k=k, num_needle_v=v, num_needle_q=q)
    ruler_prompt = doc["input"] + " " + doc["gen_prefix"]  # lm-eval joins them with the target delimiter " "

    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(family="niah", params={"variant": variant, "template": "ruler", **params},
                            haystack="noise:ruler", context_tokens=1024, depth=50.0, seed=0)
    ours = builder.build(recipe).prompt

    ruler_head, ruler_needles, ruler_tail = frame(masked_lines(ruler_prompt))
    head, needles, tail = frame(masked_lines(ours))
    assert head == ruler_head
    assert tail == ruler_tail
    assert sorted(needles) == sorted(ruler_needles) and len(needles) == k * v
    assert ours.startswith(head + "\n" + RulerNoiseHaystack.BLOCK.strip())  # the haystack's first line follows
