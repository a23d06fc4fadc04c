"""Recipe -> Sample: draft the task, assemble the exact-length prompt, check every answer is placed
once and nowhere else, hash the prompt. The same recipe gives the same bytes in any process."""

from __future__ import annotations

import hashlib
import random
import re
from functools import lru_cache

from ctxprobe.tasks.assemble import assemble
from ctxprobe.tasks.count_cache import UnitCounts
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.haystack import Haystack, make_haystack
from ctxprobe.tasks.lengths import check_depth
from ctxprobe.tasks.registry import Draft, get_family, validate_params
from ctxprobe.tasks.sample import Recipe, Sample, sha256_text
from ctxprobe.tasks.token_counter import TokenCounter, make_token_counter

MAX_ATTEMPTS = 32


def build_sample(recipe: Recipe, counter: TokenCounter | None = None) -> Sample:
    """Build the sample a recipe defines. `counter` overrides the recipe's token counter spec
    (pass the same tokenizer; the prompt is then byte-identical)."""
    family = get_family(recipe.family)
    params = validate_params(family, recipe.params)
    check_depth(recipe.depth)
    counts = unit_counts(recipe.haystack, counter or token_counter(recipe.token_counter))
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(hashlib.sha256(f"{recipe.canonical_json()}#{attempt}".encode()).digest())
        draft = family.draft(params, recipe.depth, recipe.mode, rng)
        built = assemble(draft, counts, recipe.context_tokens, lead_tokens(counts.counter, recipe.mode))
        if answers_placed_once(built.prompt, draft, [n.text for n in built.needles]):
            break
    else:
        raise UserError(
            f"could not place unique answers in haystack {recipe.haystack!r} after {MAX_ATTEMPTS} tries "
            "(the haystack already contains the task's values)"
        )
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt=built.prompt,
        prompt_sha256=sha256_text(built.prompt),
        planned_tokens=built.planned_tokens,
        approximate=counts.counter.approximate,
        question=draft.question,
        answer_prefix=draft.answer_prefix,
        max_tokens=draft.max_tokens,
        expected=draft.expected,
        needles=built.needles,
    )


def answers_placed_once(prompt: str, draft: Draft, needle_units: list[str]) -> bool:
    """Each answer (and each string the family marks unique) occurs in the prompt exactly where the
    needles, head and tail put it: the haystack itself holds none, not even inside a longer token."""
    placed = "\x00".join([draft.head, *needle_units, draft.tail])
    for text in {*draft.unique, *(n.answer for n in draft.needles)}:
        if prompt.count(text) == placed.count(text):
            continue  # not even a substring of the haystack (the common case: one fast scan)
        pattern = _whole(text)
        if len(pattern.findall(prompt)) != len(pattern.findall(placed)):
            return False
    return True


_LEAD: dict[tuple[int, str], tuple[TokenCounter, int]] = {}  # holds the counter, so its id stays its own


def lead_tokens(counter: TokenCounter, mode: str) -> int:
    """Tokens the endpoint adds around the prompt text: in chat mode the chat template's, where the
    counter can measure it (vLLM, SGLang, llama-server); otherwise BOS. Measured once per counter."""
    key = (id(counter), mode)
    if key not in _LEAD:
        lead = counter.bos_tokens
        if mode == "chat":
            measure = getattr(counter, "chat_overhead", None)
            overhead = measure() if callable(measure) else None
            lead = overhead if isinstance(overhead, int) else lead
        _LEAD[key] = (counter, lead)
    return _LEAD[key][1]


@lru_cache(maxsize=256)
def _whole(text: str) -> re.Pattern[str]:
    return re.compile(r"(?<![0-9A-Za-z])" + re.escape(text) + r"(?![0-9A-Za-z])")


@lru_cache(maxsize=16)
def haystack(spec: str) -> Haystack:
    return make_haystack(spec)


@lru_cache(maxsize=8)
def token_counter(spec: str) -> TokenCounter:
    return make_token_counter(spec)


_COUNTS: dict[tuple[str, int], UnitCounts] = {}


def unit_counts(haystack_spec: str, counter: TokenCounter) -> UnitCounts:
    """One UnitCounts per (haystack, counter) per process, so a suite counts each unit once."""
    key = (haystack_spec, id(counter))
    if key not in _COUNTS:
        _COUNTS[key] = UnitCounts(haystack(haystack_spec), counter)
    return _COUNTS[key]
