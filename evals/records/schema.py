"""The schema version of every file ctxprobe writes (manifest.json, every line of samples.jsonl,
limit.json, compare.json, history.json). Files written before versions were recorded are version 1 and
stay readable; 2 versioned the run folder; 3 typed the engine facts and versioned the other outputs."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

SCHEMA_VERSION = 3


def _known_version(version: int) -> int:
    if not 1 <= version <= SCHEMA_VERSION:
        raise ValueError(
            f"schema version {version} is not one this ctxprobe reads (1 to {SCHEMA_VERSION}): "
            "written by a newer ctxprobe? upgrade to read it"
        )
    return version


SchemaVersion = Annotated[int, AfterValidator(_known_version)]  # every versioned file's `schema_version`


def versioned(data: Any) -> Any:
    """Validator input with `schema_version` filled in: data without one predates versions (1)."""
    if isinstance(data, dict) and "schema_version" not in data:
        return {**data, "schema_version": 1}
    return data
