"""Reading a model's config.json: the text tower, typed integer look-ups, and one error that names
every missing key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ctxprobe.runners.model_facts import load_config
from ctxprobe.tasks.errors import UserError

__all__ = ["ModelConfig", "load_config"]

MAX_DIMENSION = 2**31  # layers, heads, sizes, context: a config past this is not a model's (and would not fit memory)

# Activation dtypes as config.json spells them (`torch_dtype`, newer `dtype`), in bytes.
_CONFIG_DTYPES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


class ModelConfig:
    """The decoder's keys: a multimodal config's `text_config` when there is one, else the top level."""

    def __init__(self, raw: Mapping[str, Any], name: str) -> None:
        text = raw.get("text_config")
        self.keys: Mapping[str, Any] = text if isinstance(text, Mapping) else raw
        self.outer = raw
        self.name = name
        self.prefix = "text_config." if isinstance(text, Mapping) else ""

    @property
    def model_type(self) -> str:
        return str(self.keys.get("model_type") or self.outer.get("model_type") or "unknown")

    @property
    def architecture(self) -> str | None:
        archs = self.outer.get("architectures") or self.keys.get("architectures")
        return str(archs[0]) if isinstance(archs, list) and archs else None

    def has(self, key: str) -> bool:
        return self.keys.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.keys.get(key)

    def int_or_none(self, key: str, section: Mapping[str, Any] | None = None) -> int | None:
        """A positive integer, or None when absent/null; a value of another type is a user error."""
        value = (self.keys if section is None else section).get(key)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or int(value) != value
        ):
            raise UserError(f"{self.name}: key {key!r} should be an integer, got {value!r}")
        if value < 0:
            raise UserError(f"{self.name}: key {key!r} should not be negative, got {value!r}")
        if value > MAX_DIMENSION:
            raise UserError(
                f"{self.name}: key {key!r} is {value:,}, more than any model has (at most {MAX_DIMENSION:,})"
            )
        return int(value)

    def require(
        self, what: str, keys: tuple[str, ...], section: Mapping[str, Any] | None = None, where: str = ""
    ) -> dict[str, int]:
        """Every key in `keys` as an int; one error listing all that are missing."""
        found = {key: self.int_or_none(key, section) for key in keys}
        missing = [f"{where}{key}" for key, value in found.items() if value is None]
        if missing:
            raise self.missing(what, missing)
        return {key: value for key, value in found.items() if value is not None}

    def heads_and_head_dim(self, what: str) -> tuple[int, int]:
        """`num_attention_heads` and `head_dim` (or `hidden_size / num_attention_heads`)."""
        heads, head_dim = self.int_or_none("num_attention_heads"), self.int_or_none("head_dim")
        hidden = self.int_or_none("hidden_size")
        missing = [] if heads else ["num_attention_heads"]
        if not head_dim and not hidden:
            missing.append("head_dim (or hidden_size)")
        if missing or heads is None:
            raise self.missing(what, missing)
        return heads, head_dim or (hidden or 0) // heads

    def missing(self, what: str, keys: list[str], hint: str = "") -> UserError:
        """`what` is a verb phrase: "size MLA layers" -> "cannot size MLA layers: missing ..."."""
        named = ", ".join(f"{self.prefix}{key}" for key in keys)
        return UserError(f"{self.name}: cannot {what}: missing {named}" + (f"; {hint}" if hint else ""))

    def activation_bytes(self) -> tuple[str, int]:
        """The model dtype (for the short-convolution state); bf16 when the config names none."""
        for key in ("torch_dtype", "dtype"):
            value = self.keys.get(key) or self.outer.get(key)
            if isinstance(value, str) and value in _CONFIG_DTYPES:
                return value, _CONFIG_DTYPES[value]
        return "bfloat16", 2
