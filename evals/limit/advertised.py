"""The advertised context length: given by the user, or read from a local config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxprobe.evals.records.limit import Advertised
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.lengths import parse_length

__all__ = ["Advertised", "advertised_length"]


def advertised_length(given: str | None, config_path: str | None) -> Advertised:
    if given:
        return Advertised(tokens=parse_length(given), source="--advertised")
    if not config_path:
        return Advertised(tokens=None, source="not given (pass --advertised or --config)")
    path = Path(config_path)
    if not path.is_file():
        raise UserError(f"config file not found: {config_path}")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"config file is not valid JSON: {config_path}") from None
    return _from_config(config, str(path))


def _from_config(config: dict[str, Any], where: str) -> Advertised:
    nested = config.get("text_config")
    text: dict[str, Any] = nested if isinstance(nested, dict) else config
    max_pos = text.get("max_position_embeddings")
    if not isinstance(max_pos, int) or max_pos <= 0:
        raise UserError(f"{where} has no max_position_embeddings")
    scaling = text.get("rope_scaling") or {}
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    if not isinstance(factor, (int, float)) or factor <= 1:
        return Advertised(tokens=max_pos, source=f"{where}: max_position_embeddings")
    original = scaling.get("original_max_position_embeddings")
    if isinstance(original, int) and original > 0:
        # YaRN / llama3-style: max_position_embeddings may already be the extended length.
        tokens = max(max_pos, int(original * factor))
        return Advertised(
            tokens=tokens,
            source=f"{where}: max(max_position_embeddings, rope_scaling original {original} x factor {factor:g})",
        )
    return Advertised(
        tokens=int(max_pos * factor),
        source=f"{where}: max_position_embeddings {max_pos} x rope_scaling factor {factor:g}",
    )
