"""ctxprobe: long-context recall evaluation for OpenAI-compatible endpoints.

The library API that nightly jobs and the `ctxprobe` command line both call. Heavy modules load on first
use, so `import ctxprobe` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it (imported on first attribute access)
_API: dict[str, str] = {}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxprobe' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
