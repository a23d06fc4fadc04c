"""ctxprobe's cache folder (counted tokens, built tokenizers, the packaged model's copy), apart from the
counters that keep their files there, so that none of them imports another for it."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """ctxprobe's cache folder: $CTXPROBE_CACHE, else ~/.cache/ctxprobe."""
    return Path(os.environ.get("CTXPROBE_CACHE") or Path.home() / ".cache" / "ctxprobe")
