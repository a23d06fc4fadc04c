"""The schema version of a run folder's files (manifest.json and every line of samples.jsonl). Files
written before versions were recorded are version 1 and stay readable."""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 2


def versioned(data: Any) -> Any:
    """Validator input with `schema_version` filled in: data without one predates versions (1)."""
    if isinstance(data, dict) and "schema_version" not in data:
        return {**data, "schema_version": 1}
    return data
