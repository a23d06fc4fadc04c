"""One adapter per engine: how it is recognised, what it states about itself, its tokenize call, its
too-long shape and its metric names (runners.engines.base says what each holds). Every module of this
package is imported here, so an adapter module registers itself by being in the folder. Found by name:

    adapter("llama-server").tokenize_call(...)
"""

from __future__ import annotations

import importlib
import pkgutil

from ctxprobe.runners.engines.base import Call, Calls, EngineAdapter, TooLong, register, registered, unregister
from ctxprobe.tasks.errors import UserError

__all__ = ["Call", "Calls", "EngineAdapter", "TooLong", "adapter", "adapters", "known_engines", "register",
           "unregister"]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")  # each adapter module registers its engine


def adapters() -> list[EngineAdapter]:
    """Every registered adapter, in the order engines are tried (`probe_rank`, then name)."""
    return sorted(registered().values(), key=lambda a: (a.probe_rank, a.name))


def known_engines() -> tuple[str, ...]:
    return tuple(a.name for a in adapters())


def adapter(name: str) -> EngineAdapter:
    """The adapter of engine `name`; an unknown name is a user error that lists the known ones."""
    found = registered()
    if name not in found:
        raise UserError(f"unknown engine {name!r}; known: {', '.join(known_engines())}")
    return found[name]
