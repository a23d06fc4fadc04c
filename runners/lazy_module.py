"""A module imported on its first attribute access, for the heavy libraries a command may never touch.

`ctxprobe run` sends its first request (the endpoint's probe, over the standard library) before it needs the
OpenAI SDK, which, with its HTTP stack, took longer to import than everything else the command had done by
then. A module that holds `openai = lazy_module("openai")` uses `openai.X` as before; the import happens at the
first `openai.X` that runs."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module `name` until first used; then each attribute is the real module's."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, {'loaded' if self._module is not None else 'not loaded yet'}>"


def lazy_module(name: str) -> Any:
    """`name`, imported when an attribute of it is first asked for (typed Any: annotate with the real module
    under TYPE_CHECKING)."""
    return LazyModule(name)
