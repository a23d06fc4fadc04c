"""One adapter per engine: how it is recognised, what it states about itself, its tokenize call, its
too-long shape and its metric names (runners.engines.base says what each holds). Every module of this
package is imported here, so an adapter module registers itself by being in the folder. Found by name:

    adapter("llama-server").tokenize_call(...)
"""

from __future__ import annotations

from ctxprobe.runners.engines.base import (
    ENGINES,
    ENTRY_POINT_GROUP,
    Call,
    Calls,
    EngineAdapter,
    TooLong,
    register,
    unregister,
)
from ctxprobe.tasks.plugins import import_modules

__all__ = [
    "ENGINES",
    "ENTRY_POINT_GROUP",
    "Call",
    "Calls",
    "EngineAdapter",
    "TooLong",
    "adapter",
    "adapters",
    "known_engines",
    "register",
    "unregister",
]

import_modules(__name__, skip=("base",))  # each adapter module registers its engine


def adapters() -> list[EngineAdapter]:
    """Every registered adapter, in the order engines are tried (`probe_rank`, then name)."""
    return list(ENGINES)


def known_engines() -> tuple[str, ...]:
    return tuple(ENGINES.known())


def adapter(name: str) -> EngineAdapter:
    """The adapter of engine `name`; an unknown name is a user error that lists the known ones."""
    return ENGINES.get(name, "unknown engine {name!r}; known: {known}")
