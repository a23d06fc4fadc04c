"""RULER's variable tracking (`vt`) layout, as lm-eval's `ruler_vt` task writes it (`tasks/ruler/vt_utils.py`,
adapted from NVIDIA's RULER `variable_tracking.py`), for `multihop` `kind: vartrack` with `template: ruler`.

The prompt is a one-shot example, two blank lines, then the task:

    {example}\\n\\n\\n\\n
    Memorize and track the chain(s) of variable assignment hidden in the following text.\\n\\n
    {haystack with VAR statements}\\n\\n
    Question: Find all variables that are assigned the value {value} in the text above. Answer: According to
    the chain(s) of variable assignment in the text above, {n} variables are assgined the value {value}, they are:

("assgined" is RULER's spelling, kept.) The example is the same task on RULER's own noise: one chain of 4 hops
with 3-letter names, its answer written after the prefix. lm-eval sizes the example to 500 tokens with the
model's tokenizer in steps of 5 noise blocks; here it has a fixed `EXAMPLE_NOISES` blocks (what lm-eval gives
with Gemma 3's tokenizer), so the example does not depend on the tokenizer. The statements are RULER's,
`VAR ABCDE = 12345` and `VAR FGHIJ = VAR ABCDE`, without a final period. In the example they are laid out as
RULER lays out its haystack (blocks joined by " ", each ending in a newline); in the task's haystack each
statement is a needle of the haystack's own kind (a line of its own in `noise:ruler`)."""

from __future__ import annotations

import random
from typing import NamedTuple

from ctxprobe.tasks.families.vocab import make_value, make_var_name
from ctxprobe.tasks.haystack.noise import RulerNoiseHaystack

GENERATION_TOKENS = 30  # RULER's `vt` lets the model generate 30 tokens, counted in the nominal length
EXAMPLE_NOISES = 10
EXAMPLE_HOPS = 4
VALUE_KIND = "digits5"  # RULER's values are 5-digit numbers
NOISE = RulerNoiseHaystack.BLOCK.strip() + "\n"  # one repetition of RULER's noise, as RULER joins them

HEAD = "Memorize and track the chain(s) of variable assignment hidden in the following text."


def question(value: str) -> str:
    return f"Question: Find all variables that are assigned the value {value} in the text above."


def answer_prefix(count: int, value: str) -> str:
    return (
        f"Answer: According to the chain(s) of variable assignment in the text above, {count} variables "
        f"are assgined the value {value}, they are:"
    )


def statements(names: list[str], value: str) -> list[str]:
    """The chain's assignments in order: the value to the first name, then each name to the one before."""
    return [f"VAR {names[0]} = {value}"] + [f"VAR {names[i]} = VAR {names[i - 1]}" for i in range(1, len(names))]


class Example(NamedTuple):
    text: str  # ends in the blank lines before the task
    names: list[str]
    value: str


def example(rng: random.Random, taken_names: set[str], taken_values: set[str]) -> Example:
    """The one-shot example, its variable names and its value: RULER's
    `generate_input_output` for one chain, with the statements inserted at sorted random block positions."""
    names = [make_var_name(rng, taken_names, 3) for _ in range(EXAMPLE_HOPS + 1)]
    value = make_value(VALUE_KIND, rng, taken_values)
    # RULER writes every statement but the first with a trailing space ("VAR B = VAR A ").
    chain = [s if i == 0 else s + " " for i, s in enumerate(statements(names, value))]
    pieces = [NOISE] * EXAMPLE_NOISES
    for j, position in enumerate(sorted(rng.sample(range(EXAMPLE_NOISES), len(chain)))):
        pieces.insert(position + j, chain[j])
    context = " ".join(pieces).replace(". \n", ".\n")
    text = f"{HEAD}\n\n{context}\n{question(value)} {answer_prefix(len(names), value)}  {' '.join(names)}\n\n\n\n"
    return Example(text, names, value)
