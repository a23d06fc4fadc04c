"""A task's distinguishing parameters: those that tell it apart from its family's defaults, in the order
every name built from them shows them (variant and kind first, the rest sorted). The report's variant
label and the lm-eval export's task names are both built from these typed values, so neither is ever
parsed back out of the other."""

from __future__ import annotations

from typing import Any

from ctxprobe.tasks.identity import DATASET_DIGEST
from ctxprobe.tasks.registry import get_family, known_families, validate_params

FIRST_PARAMS = ("variant", "kind", "facts", "value_kind")
ALWAYS_SHOWN = ("variant", "kind", "facts")


def variant_params(params: dict[str, Any], family: str | None = None) -> dict[str, Any]:
    """`params` in display order. With the family named, parameters at their defaults are left out
    (variant and kind always shown), so a recipe that spells out its defaults and one that doesn't name
    the same variant. A dataset named by its content shows as `dataset: sha256:` and the digest's first 12 hex
    digits, not its path. A name no family registered (an imported RULER task) keeps its parameters as recorded."""
    if family is not None and family in known_families():
        registered = get_family(family)
        full = validate_params(registered, params).model_dump(mode="json")
        defaults = registered.Params().model_dump(mode="json")
        params = {
            k: v for k, v in full.items() if (k in ALWAYS_SHOWN or v != defaults.get(k)) and _shown(registered, k)
        }
    if params.get(DATASET_DIGEST):  # a dataset by its content, never by where it lies
        params = {
            **{k: v for k, v in params.items() if k != DATASET_DIGEST},
            "dataset": f"sha256:{str(params[DATASET_DIGEST])[:12]}",
        }
    keys = [k for k in FIRST_PARAMS if k in params] + sorted(k for k in params if k not in FIRST_PARAMS)
    return {k: params[k] for k in keys}


def _shown(family: Any, name: str) -> bool:
    """False for a parameter its family keeps out of labels (`json_schema_extra={"shown": False}`: a user's
    needle text, which the item's name stands for)."""
    extra = family.Params.model_fields[name].json_schema_extra
    return not (isinstance(extra, dict) and extra.get("shown") is False)
