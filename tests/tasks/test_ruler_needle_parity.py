"""RULER parity for `niah_multikey_2` and `niah_multikey_3`: the filler is RULER's `needle` haystack, lines
of distractor needles. The reference is built by lm-eval's own RULER code (`prepare_niah.generate_samples`
with `get_haystack("needle")`); with keys and values masked, both prompts are the instruction, lines that are
all needles of one form, and the question with its answer prefix, and the asked key is on exactly one line."""

from __future__ import annotations

import random
import re

import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from tests.tasks.word_tokenizer import WordTokenizer

NEEDLE = re.compile(r"One of the special magic (\w+) for (\S+) is: (\S+)\.")
# RULER task -> (ctxprobe haystack, niah params, RULER's key and value types)
TASKS = {
    "niah_multikey_2": ("needle", {}, ("words", "numbers")),
    "niah_multikey_3": ("needle:uuid", {"key_kind": "uuid", "value_kind": "uuid"}, ("uuids", "uuids")),
}


def masked_lines(prompt: str) -> tuple[list[str], str]:
    """The prompt's lines with every key and value masked, and the asked key."""
    asked = re.search(r"for (\S+) mentioned in the provided text", prompt)
    assert asked
    lines = [NEEDLE.sub(r"One of the special magic \1 for KEY is: VALUE.", line) for line in prompt.split("\n")]
    return [line.replace(asked.group(1), "KEY") for line in lines], asked.group(1)


def ruler_prompt(task: str) -> str:
    prepare = pytest.importorskip("lm_eval.tasks.ruler.prepare_niah", reason="lm-eval's ruler extra is not installed")
    niah_utils = pytest.importorskip("lm_eval.tasks.ruler.niah_utils", reason="transformers is not installed")
    key_type, value_type = TASKS[task][2]
    random.seed(5)
    [doc] = prepare.generate_samples(
        prepare.get_haystack(type_haystack="needle"),
        TOKENIZER=WordTokenizer(),
        max_seq_length=900,
        type_haystack="needle",
        type_needle_k=key_type,
        type_needle_v=value_type,
        template=niah_utils.TEMPLATE,
        num_samples=1,
    )
    return doc["input"] + " " + doc["gen_prefix"]  # lm-eval joins them with the target delimiter " "


def ctxprobe_prompt(task: str, depth: float = 50.0) -> tuple[str, list[str]]:
    hay, params, _ = TASKS[task]
    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="niah",
        params={"variant": "single", "template": "ruler", "length_convention": "ruler", **params},
        haystack=hay,
        context_tokens=1024,
        depth=depth,
        seed=0,
    )
    sample = builder.build(recipe)
    return sample.prompt, sample.expected.answers


@pytest.mark.parametrize("task", sorted(TASKS))
def test_needle_haystack_prompt_matches_lm_evals_ruler_prompt(task: str) -> None:
    ruler_text, (ours_text, answers) = ruler_prompt(task), ctxprobe_prompt(task)
    (ruler, ruler_key), (ours, key) = masked_lines(ruler_text), masked_lines(ours_text)
    assert ours[0] == ruler[0] and ours[-1] == ruler[-1]  # the instruction; the question and answer prefix
    noun = "uuids" if task.endswith("3") else "numbers"
    line = f"One of the special magic {noun} for KEY is: VALUE."
    assert set(ours[1:-1]) == set(ruler[1:-1]) == {line}  # every line between is a needle of one form
    for text, asked in ((ruler_text, ruler_key), (ours_text, key)):
        assert len(re.findall(f"for {re.escape(asked)} is: ", text)) == 1  # the asked key has one needle
    assert f"for {key} is: {answers[0]}." in ours_text


def test_the_needle_haystack_is_deterministic_and_holds_neither_the_asked_key_nor_the_answer() -> None:
    first, answers = ctxprobe_prompt("niah_multikey_2", depth=20.0)
    again, _ = ctxprobe_prompt("niah_multikey_2", depth=20.0)
    assert first == again
    assert first.count(answers[0]) == 1
    keys = re.findall(r"for (\S+) is: ", first)
    assert len(keys) > 20 and len(set(keys)) > 0.9 * len(keys)  # distractors with their own keys
    values = re.findall(r"is: (\d{7})\.", first)
    assert len(values) == len(keys)  # every distractor has a 7-digit value, as RULER's


def test_an_unknown_needle_haystack_argument_is_a_user_error() -> None:
    from ctxprobe.tasks.errors import UserError
    from ctxprobe.tasks.haystack import make_haystack

    with pytest.raises(UserError, match="needle:words"):
        make_haystack("needle:words")
