"""One adapter per engine: how it is recognised, what it states about itself, its tokenize call, its
too-long shape and its metric names (runners.engines.base says what each holds). Found by name:

    adapter("llama-server").tokenize_call(...)
"""

from __future__ import annotations

from ctxprobe.runners.engines import llama_cpp_python, llama_server, sglang, vllm  # noqa: F401 - registers them
from ctxprobe.runners.engines.base import Call, Calls, EngineAdapter, TooLong, registered
from ctxprobe.tasks.errors import UserError

__all__ = ["Call", "Calls", "EngineAdapter", "TooLong", "adapter", "adapters", "known_engines"]

# The order engines are tried in when nothing hints which one answers: the cheapest identifying calls
# first, and llama-cpp-python's too-long wording (which shares vLLM's "maximum context length") before vLLM's.
_ORDER = ("llama-server", "sglang", "llama-cpp-python", "vllm")


def adapters() -> list[EngineAdapter]:
    found = registered()
    return [found[name] for name in _ORDER if name in found] + [a for n, a in found.items() if n not in _ORDER]


def known_engines() -> tuple[str, ...]:
    return tuple(a.name for a in adapters())


def adapter(name: str) -> EngineAdapter:
    """The adapter of engine `name`; an unknown name is a user error that lists the known ones."""
    found = registered()
    if name not in found:
        raise UserError(f"unknown engine {name!r}; known: {', '.join(known_engines())}")
    return found[name]
