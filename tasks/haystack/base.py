"""The haystack interface, the registry of haystack kinds, and the block-seeded base for generated kinds.

A haystack is an endless (or cycling) sequence of text *units*. Every unit begins with its own separator
(" ", "\\n", "\\n\\n", ...) and has no trailing whitespace, so a unit tokenizes the same alone as inside
the prompt and a prompt's token count is the sum of its units' counts. A kind is registered with
`@haystack_kind("name")`: by the modules of this package, or by a module a `ctxprobe.haystacks` entry point
names (tasks.plugins).
"""

from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from collections.abc import Callable
from typing import ClassVar, Protocol, runtime_checkable

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.plugins import Registry


@runtime_checkable
class Haystack(Protocol):
    """Filler text cut into units; needles are inserted between units."""

    spec: str
    fingerprint: str

    def units(self, start: int, stop: int) -> list[str]:
        """Units [start, stop); the same indices give the same text in every process."""
        ...

    def wrap_needle(self, sentence: str) -> str:
        """How an inserted sentence is written as a unit of this haystack."""
        ...


HaystackFactory = Callable[[str | None], Haystack]
"""Builds a haystack from the part of the spec after `kind:` (None when there is none)."""

ENTRY_POINT_GROUP = "ctxprobe.haystacks"  # [project.entry-points."ctxprobe.haystacks"] name = "module"
_KINDS: Registry[HaystackFactory] = Registry("haystack kind", group=ENTRY_POINT_GROUP)


def haystack_kind(name: str) -> Callable[[HaystackFactory], HaystackFactory]:
    """Register a factory under a kind name: `@haystack_kind("prose")`."""
    return _KINDS.register(name)


def known_kinds() -> list[str]:
    """The registered kind names, sorted."""
    return _KINDS.known()


def make_haystack(spec: str) -> Haystack:
    """`prose`, `code`, `legal`, `noise`, `file:PATH`, `dir:PATH` or `hf:NAME[:split[:column]]`."""
    kind, sep, arg = spec.strip().partition(":")
    factory = _KINDS.find(kind)
    if factory is None:
        raise UserError(f"unknown haystack {spec!r}: known kinds are {', '.join(known_kinds())}")
    return factory(arg if sep else None)


def seeded_rng(*parts: object) -> random.Random:
    """A generator seeded from sha256 of the parts, identical in every process and on every machine."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def fingerprint_of(*parts: str | bytes) -> str:
    """sha256 hex over the parts, each length-prefixed so that no two lists collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def no_argument(kind: str, arg: str | None) -> None:
    """Generated kinds take no `kind:ARG` part."""
    if arg is not None:
        raise UserError(f"haystack {kind!r} takes no argument, got {kind}:{arg}")


def check_range(start: int, stop: int) -> None:
    """Unit ranges are programmer input: negative or reversed ranges are bugs, not user errors."""
    if start < 0 or stop < start:
        raise ValueError(f"bad unit range [{start}, {stop})")


def partition(rng: random.Random, total: int, low: int, high: int) -> list[int]:
    """Split `total` (>= low) into parts of low..high that add up to exactly `total` (paragraph
    lengths, clause lengths, method sizes)."""
    lengths: list[int] = []
    remaining = total
    while remaining > high:
        n = rng.randint(low, min(high, remaining - low))
        lengths.append(n)
        remaining -= n
    lengths.append(remaining)
    return lengths


class GeneratedHaystack:
    """An unbounded haystack generated in blocks of `block_units` units, each from its own seed.

    Unit i lives in block i // block_units, so `units(40000, 41000)` generates only the blocks it
    touches. Recently used blocks are kept, so repeated prompt builds only slice lists.
    """

    kind: ClassVar[str]
    version: ClassVar[str]
    block_units: ClassVar[int]
    cached_blocks: ClassVar[int] = 1024

    def __init__(self) -> None:
        self.spec = self.kind
        self.fingerprint = fingerprint_of("ctxprobe-haystack", self.kind, self.version)
        self._blocks: OrderedDict[int, list[str]] = OrderedDict()

    def make_block(self, rng: random.Random, index: int) -> list[str]:
        """Exactly `block_units` units for block `index`, drawing only from `rng`."""
        raise NotImplementedError

    def block(self, index: int) -> list[str]:
        cached = self._blocks.get(index)
        if cached is not None:
            self._blocks.move_to_end(index)
            return cached
        units = self.make_block(seeded_rng("ctxprobe-haystack", self.kind, self.version, index), index)
        if len(units) != self.block_units:
            raise AssertionError(f"{self.kind} block {index} has {len(units)} units, not {self.block_units}")
        self._blocks[index] = units
        if len(self._blocks) > self.cached_blocks:
            self._blocks.popitem(last=False)
        return units

    def units(self, start: int, stop: int) -> list[str]:
        check_range(start, stop)
        size = self.block_units
        out: list[str] = []
        if stop == start:
            return out
        for b in range(start // size, (stop - 1) // size + 1):
            lo = max(start - b * size, 0)
            hi = min(stop - b * size, size)
            block = self.block(b)
            out.extend(block if lo == 0 and hi == size else block[lo:hi])
        return out

    def wrap_needle(self, sentence: str) -> str:
        return " " + sentence.strip()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r})"
