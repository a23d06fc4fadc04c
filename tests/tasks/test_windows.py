"""Per-seed haystack windows: the samples of one cell read different parts of the haystack, while a depth
sweep of one seed shares its prefix up to the shallower needle (what a prefix cache can reuse)."""

from __future__ import annotations

import os

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import WINDOW_STEP_MAX, seed_window
from ctxprobe.tasks.suite import Suite


def common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def test_seeds_read_their_own_text_and_a_depth_sweep_shares_its_prefix() -> None:
    builder = builder_for(token_counter("estimate"))
    fields = dict(family="niah", haystack="prose", context_tokens=2048)
    seed0_deep = builder.build(builder.recipe(**fields, depth=100.0, seed=0))
    seed0_mid = builder.build(builder.recipe(**fields, depth=50.0, seed=0))
    seed1_deep = builder.build(builder.recipe(**fields, depth=100.0, seed=1))
    head = len(seed0_deep.prompt) - len(seed0_deep.prompt.lstrip())  # nothing; the instruction comes first
    mid_needle = seed0_mid.needles[0].char_offset
    assert common_prefix(seed0_deep.prompt, seed0_mid.prompt) >= mid_needle  # shared up to the needle
    instruction = seed0_deep.prompt.index("\n\n") + 2
    shared = common_prefix(seed0_deep.prompt, seed1_deep.prompt)
    assert head == 0 and shared < instruction + 200  # another seed: other haystack text right after the head
    body0 = seed0_deep.prompt[instruction : seed0_deep.needles[0].char_offset]
    body1 = seed1_deep.prompt[instruction : seed1_deep.needles[0].char_offset]
    assert body0[:500] not in body1 and body1[:500] not in body0


def test_suite_recipes_carry_their_seed_window() -> None:
    suite = Suite.model_validate(
        {"name": "s", "lengths": ["2k", "1m"], "depths": [0, 100], "samples": 3, "tasks": [{"family": "niah"}]}
    )
    recipes = suite.recipes(lambda mode: "estimate:4")
    assert {(r.seed, r.context_tokens, r.window) for r in recipes} == {
        (s, n, seed_window(s, n)) for s in range(3) for n in (2048, 1_000_000)
    }
    assert seed_window(2, 2048) == 2 * 256 and seed_window(2, 1_000_000) == 2 * WINDOW_STEP_MAX
