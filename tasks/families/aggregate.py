"""`aggregate`: RULER's aggregation tasks, where the whole context is the task and the answer is the words
that occur most often in it.

- `kind: common_words` is RULER's `cwe`: a numbered list ("1. word 2. word ...") of words drawn from RULER's
  word list (wonderwords 3.0.1's nouns, adjectives and verbs, kept in `data/ruler_cwe_words.txt`): 10 common
  words appear 30 times each and every other word 3 times, or 6 times and once below 4096 tokens, as RULER's
  frequency rule has it; asked for the 10 common words.
- `kind: frequent_words` is RULER's `fwe`: a text of random 6-letter coded words whose counts follow Zipf's
  law (`n * k^-2 / zeta(2)` for the k-th of `length // 50` words, the first being the noise word `...`);
  asked for the three most frequent coded words.

The size (how many words) is the largest that fits the length (see `tasks/sized.py`), as RULER grows its
list. `template: ruler` writes lm-eval's `ruler_cwe` / `ruler_fwe` strings and separators (the answer
prefix after a blank line for `cwe`, after a space for `fwe`, as lm-eval's target delimiters put it);
`length_convention: ruler` counts `cwe`'s 120 generated tokens in the length (RULER's `fwe` fills the
length with the text alone, so it keeps none). Scored as `values`: exact when every word is named, partial
credit the fraction named (RULER's `string_match_all`, with whole words instead of substrings)."""

from __future__ import annotations

import math
import random
import string
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.tasks.families.framing import LengthConvention, Template, frame, length_convention_field, template_field
from ctxprobe.tasks.registry import Draft, task_family
from ctxprobe.tasks.sample import Expected, Mode
from ctxprobe.tasks.sized import Sized

COMMON = 10  # RULER's num_cw
CWE_GENERATION_TOKENS = 120
FWE_TOP = 3
FWE_WORD_LETTERS = 6
FWE_ALPHA = 2.0
ZETA_2 = math.pi**2 / 6  # zeta(FWE_ALPHA)
FWE_NOISE = "..."

CWE_HEAD = (
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often."
)
CWE_QUESTION = "Question: What are the 10 most common words in the above list?"
CWE_PREFIX = "Answer: The top 10 words that appear most often in the list are:"
FWE_HEAD = (
    "Read the following coded text and track the frequency of each coded word. "
    "Find the three most frequently appeared coded words."
)
FWE_QUESTION = (
    "Question: Do not provide any explanation. Please ignore the dots '....'. "
    "What are the three most frequently appeared words in the above coded text?"
)
FWE_PREFIX = "Answer: According to the coded text above, the three most frequently appeared words are:"


@cache
def cwe_words() -> tuple[str, ...]:
    """RULER's `cwe` word list, sorted."""
    text = resources.files("ctxprobe.tasks.families").joinpath("data/ruler_cwe_words.txt").read_text("utf-8")
    return tuple(text.split("\n")[:-1])


def cwe_frequencies(length: int) -> tuple[int, int]:
    """RULER's rule: (repeats of a common word, of an uncommon one) at a nominal length."""
    return (6, 1) if length < 4096 else (30, 3)


def zipf_counts(words: int, vocab_size: int) -> list[int]:
    """How often the k-th coded word occurs among `words`: int(words * k^-2 / zeta(2)), as RULER computes it."""
    return [int(words * k**-FWE_ALPHA / ZETA_2) for k in range(1, vocab_size + 1)]


class AggregateParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["common_words", "frequent_words"] = Field(
        "common_words", description="common_words (RULER's cwe) or frequent_words (RULER's fwe)"
    )
    template: Template = template_field()
    length_convention: LengthConvention = length_convention_field("cwe's includes 120 generated tokens")


@task_family("aggregate")
class Aggregate(Sized):
    Params = AggregateParams

    def max_size(self, params: BaseModel, length: int) -> int:
        p = AggregateParams.model_validate(params)
        return len(cwe_words()) if p.kind == "common_words" else 4 * length

    def sized_draft(self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int) -> Draft:
        p = AggregateParams.model_validate(params)
        if p.kind == "common_words":
            context, answers = _common_words(rng, length, max(size, COMMON + 1))
            head, question, prefix, gap = CWE_HEAD, CWE_QUESTION, CWE_PREFIX, "\n\n"
            reserve, max_tokens = CWE_GENERATION_TOKENS, CWE_GENERATION_TOKENS
        else:
            context, answers = _frequent_words(rng, length, size)
            head, question, prefix, gap = FWE_HEAD, FWE_QUESTION, FWE_PREFIX, " "
            reserve, max_tokens = 0, 50
        opening = (
            "\n" if p.kind == "common_words" else " "
        )  # RULER: cwe's list on its own line, fwe's text after a space
        draft = frame(
            head + opening + context,
            question,
            prefix,
            mode,
            (),
            Expected(kind="values", answers=answers),
            max_tokens=max_tokens,
            template=p.template,
            length_convention=p.length_convention,
            ruler_generation_tokens=reserve,
            ruler_prefix_gap=gap,
            document_start=len(head),
        )
        return draft


def _common_words(rng: random.Random, length: int, size: int) -> tuple[str, list[str]]:
    """RULER's `get_example`: `size` distinct words, the first 10 common; the list shuffled and numbered."""
    common_repeats, uncommon_repeats = cwe_frequencies(length)
    chosen = rng.sample(cwe_words(), size)
    common, uncommon = chosen[:COMMON], chosen[COMMON:]
    words = common * common_repeats + uncommon * uncommon_repeats
    rng.shuffle(words)
    return " ".join(f"{i + 1}. {word}" for i, word in enumerate(words)), common


def _frequent_words(rng: random.Random, length: int, size: int) -> tuple[str, list[str]]:
    """RULER's `fwe` text of `size` sampled words: `length // 50` distinct coded words, the first the noise
    word, each repeated by Zipf's law, shuffled; the answer is the three after the noise word."""
    vocab_size = max(length // 50, FWE_TOP + 2)
    vocab: set[str] = set()
    while len(vocab) < vocab_size:
        vocab.add("".join(rng.choices(string.ascii_lowercase, k=FWE_WORD_LETTERS)))
    ranked = sorted(vocab)
    rng.shuffle(ranked)
    ranked[0] = FWE_NOISE
    words = [w for w, n in zip(ranked, zipf_counts(size, vocab_size)) for _ in range(n)]
    rng.shuffle(words)
    return " ".join(words), ranked[1 : 1 + FWE_TOP]
