"""RULER parity for the aggregation tasks: `aggregate` `template: ruler` prompts against lm-eval's own
`ruler_cwe` (`cwe_utils.sys_word_pair_random`) and `ruler_fwe` (`fwe_utils.sys_kwext`) docs. The words
differ (each draws its own), so the comparison masks them: the instruction, the separators, the question and
the answer prefix must be equal; the list's numbering, the word list, and the frequency rules (cwe's 30/3
and 6/1 repeats, fwe's Zipf counts) are checked on both prompts alike."""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import numpy as np
import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.families import aggregate
from tests.tasks.word_tokenizer import WordTokenizer


def ctxprobe_sample(kind: str, length: int, template: str = "ruler", mode: str = "completions"):  # type: ignore[no-untyped-def]
    builder = builder_for(token_counter("estimate"))
    recipe = builder.recipe(
        family="aggregate",
        params={"kind": kind, "template": template, "length_convention": "ruler"},
        context_tokens=length,
        depth=50.0,
        seed=2,
        mode=mode,
    )
    return builder.build(recipe)


def cwe_doc(length: int) -> tuple[str, list[str]]:
    cwe = pytest.importorskip("lm_eval.tasks.ruler.cwe_utils", reason="lm-eval's ruler extra is not installed")
    random.seed(3)
    [doc] = cwe.sys_word_pair_random(num_samples=1, max_seq_length=length, tokenizer=WordTokenizer())
    return doc["input"] + "\n\n" + doc["gen_prefix"], doc["outputs"]  # ruler_cwe's target delimiter is "\n\n"


def fwe_doc(length: int) -> tuple[str, list[str]]:
    fwe = pytest.importorskip("lm_eval.tasks.ruler.fwe_utils", reason="lm-eval's ruler extra is not installed")
    random.seed(3)
    [doc] = fwe.sys_kwext(tokenizer=WordTokenizer(), max_seq_length=length, num_samples=1)
    return doc["input"] + " " + doc["gen_prefix"], doc["outputs"]


def cwe_parts(prompt: str) -> tuple[str, list[str], str]:
    head, rest = prompt.split("\n", 1)
    listing, tail = rest.split("\nQuestion:", 1)
    assert listing.startswith("1. ")
    words, rest, i = [], listing[3:], 2
    while f" {i}. " in rest:  # numbered 1, 2, 3, ... in order (a few of RULER's words have a space)
        word, rest = rest.split(f" {i}. ", 1)
        words.append(word)
        i += 1
    words.append(rest)
    assert " ".join(f"{n + 1}. {w}" for n, w in enumerate(words)) == listing
    return head, words, "\nQuestion:" + tail


@pytest.mark.parametrize("length", [1024, 4096])
def test_common_words_prompt_matches_lm_evals_ruler_cwe(length: int) -> None:
    ruler_prompt, ruler_answers = cwe_doc(length)
    ours = ctxprobe_sample("common_words", length)
    ruler_head, ruler_words, ruler_tail = cwe_parts(ruler_prompt)
    head, words, tail = cwe_parts(ours.prompt)
    assert head == ruler_head and tail == ruler_tail
    common, uncommon = (6, 1) if length < 4096 else (30, 3)  # RULER's rule, written out
    for listed, answers in ((ruler_words, ruler_answers), (words, ours.expected.answers)):
        counts = Counter(listed)
        assert sorted(answers) == sorted(w for w, n in counts.items() if n == common) and len(answers) == 10
        assert all(n == uncommon for w, n in counts.items() if w not in answers)


def test_common_words_come_from_rulers_word_list() -> None:
    cwe = pytest.importorskip("lm_eval.tasks.ruler.cwe_utils", reason="lm-eval's ruler extra is not installed")
    assert sorted(aggregate.cwe_words()) == sorted(cwe.WORDS)
    words = set(aggregate.cwe_words())
    _, listed, _ = cwe_parts(ctxprobe_sample("common_words", 2048).prompt)
    assert set(listed) <= words


def zipf_profile(words: list[str], vocab_size: int) -> tuple[list[int], list[int]]:
    """(the prompt's word counts, most frequent first; what RULER's formula with scipy's zeta gives for the
    number of sampled words that explains the top count)."""
    counts = sorted(Counter(words).values(), reverse=True)
    zeta = pytest.importorskip("scipy.special").zeta
    for n in range(int(counts[0] * math.pi**2 / 6) - 3, int(counts[0] * math.pi**2 / 6) + 4):
        expected = [
            int(c) for c in (n * np.arange(1, vocab_size + 1, dtype=float) ** -2.0 / zeta(2.0)).astype(int) if c > 0
        ]
        if expected == counts:
            return counts, expected
    return counts, []


@pytest.mark.parametrize("length", [1024, 4096])
def test_frequent_words_prompt_matches_lm_evals_ruler_fwe(length: int) -> None:
    ruler_prompt, ruler_answers = fwe_doc(length)
    ours = ctxprobe_sample("frequent_words", length)
    head = aggregate.FWE_HEAD + " "
    tail = "\n" + aggregate.FWE_QUESTION + " " + aggregate.FWE_PREFIX
    for prompt, answers in ((ruler_prompt, ruler_answers), (ours.prompt, ours.expected.answers)):
        assert prompt.startswith(head) and prompt.endswith(tail)
        words = prompt[len(head) : -len(tail)].split(" ")
        assert all(w == "..." or re.fullmatch(r"[a-z]{6}", w) for w in words)
        counts, expected = zipf_profile(words, length // 50)
        assert counts == expected  # Zipf's law with RULER's exponent, vocabulary size and truncation
        ranked = [w for w, _ in Counter(words).most_common()]
        assert ranked[0] == "..." and sorted(answers) == sorted(ranked[1:4])


@pytest.mark.parametrize("kind", ["common_words", "frequent_words"])
def test_aggregate_prompts_fill_the_length_and_rebuild_byte_identical(kind: str) -> None:
    from ctxprobe.tasks.build import PromptBuilder
    from ctxprobe.tasks.token_counter import EstimateCounter, count

    counter = EstimateCounter(1.0)
    builder = PromptBuilder(counter)
    recipe = builder.recipe(family="aggregate", params={"kind": kind}, context_tokens=6000, seed=4)
    first, again = builder.build(recipe), PromptBuilder(counter).build(recipe)
    assert first.prompt == again.prompt
    assert first.planned_tokens == count(counter, first.prompt) and 6000 - 30 <= first.planned_tokens <= 6000
    assert first.prompt.endswith("\n\n" + first.question + "\n\n" + first.answer_prefix)  # ctxprobe's layout


def test_aggregate_scores_every_word_exactly_and_the_fraction_as_partial_credit() -> None:
    from ctxprobe.evals.scoring.score import score_sample

    sample = ctxprobe_sample("frequent_words", 2048)
    a, b, c = sample.expected.answers
    assert score_sample(sample, f" {a}, {b}, {c}").correct
    partial = score_sample(sample, f" {a}, {b}, xxxxxx")  # xxxxxx: a coded word that is not asked, a rival
    assert not partial.correct and partial.partial == pytest.approx(2 / 3 * 2 / 3)
    assert score_sample(sample, f" {a}, {b}").partial == pytest.approx(2 / 3)  # nothing invented: recall alone
