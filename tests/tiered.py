"""Corpus-sized parametrizations split across the test tiers. Every case of a corpus runs in the slow tier (CI runs
it); the fast tier keeps a seeded sample that still meets every group of the corpus (each command, each kind of bad
value, each answer kind with each family of tricks, ...), so `pytest -q` checks the same property on every group in
a tenth of the cases, and the cases it keeps are the same on every run."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import pytest

SEED = 46


def fast_sample(cases: Sequence[Any], keys: Callable[[Any], Iterable[Hashable]], seed: int = SEED) -> set[int]:
    """The indices of the cases the fast tier keeps: in a seeded order, each case that meets a group (a key) no case
    kept before it met, so every key of every case is met by at least one kept case."""
    order = list(range(len(cases)))
    random.Random(seed).shuffle(order)
    met: set[Hashable] = set()
    kept: set[int] = set()
    for index in order:
        new = set(keys(cases[index])) - met
        if new:
            met |= new
            kept.add(index)
    return kept


def tiered(
    cases: Sequence[Any], ids: Sequence[str], keys: Callable[[Any], Iterable[Hashable]], *, unpack: bool = False
) -> list[Any]:
    """`cases` as pytest params: the fast sample unmarked, every other case marked `slow`. `unpack` passes a tuple
    case as several arguments (a parametrize of several names)."""
    kept = fast_sample(cases, keys)
    return [
        pytest.param(*(case if unpack else (case,)), id=name, marks=() if index in kept else pytest.mark.slow)
        for index, (case, name) in enumerate(zip(cases, ids, strict=True))
    ]
