"""The `facts` grid axis: a suite's `facts: [1, 4, 16, 64]` (or `--facts`) runs each task whose family has a
`facts` parameter once per value, as `templates` runs it once per layout, so results group by (family,
facts, length) through the recipe's own parameters and every other family's recipes and ids stay as they
were. A family that knows how many facts a length holds (`max_facts(params, length)`) caps the grid: a
(facts, length) cell beyond it is left out of the suite, and a facts value no length holds is a one-line error."""

from __future__ import annotations

from typing import Any

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.items import split_items
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.registry import TaskFamily, get_family, validate_params


def facts_layouts(family: TaskFamily, params: dict[str, Any], facts: list[int] | None) -> list[dict[str, Any]]:
    """`params` once per facts value (validated: an out-of-range value is the family's own error), or as
    they are where no facts are given or the family has no `facts` parameter."""
    if not facts or "facts" not in family.Params.model_fields:
        return [params]
    return [validate_params(family, {**params, "facts": n}).model_dump(mode="json") for n in facts]


def facts_of(params: dict[str, Any]) -> dict[str, Any]:
    """The `facts` entry of full parameters, as a mapping to merge into a task's own."""
    return {"facts": params["facts"]} if "facts" in params else {}


def facts_held(family_name: str, params: dict[str, Any], lengths: list[int]) -> dict[int, int] | None:
    """The most facts each length holds with these parameters; None for a family that does not say (or
    parameters without facts)."""
    family = get_family(family_name)
    limit = getattr(family, "max_facts", None)
    if limit is None or "facts" not in params:
        return None
    typed = validate_params(family, params)
    return {n: limit(typed, n) for n in lengths}


def fitting_lengths(family_name: str, params: dict[str, Any], lengths: list[int]) -> list[int]:
    """The lengths that hold the task's facts (all of them for a family that does not say)."""
    held = facts_held(family_name, params, lengths)
    return list(lengths) if held is None else [n for n in lengths if params["facts"] <= held[n]]


def check_facts_fit(family_name: str, params: dict[str, Any], lengths: list[int]) -> list[int]:
    """The fitting lengths; a UserError naming the most facts each length holds where none fits."""
    fitting = fitting_lengths(family_name, params, lengths)
    if not fitting:  # only a family that says how many facts a length holds leaves a length out
        held = facts_held(family_name, params, lengths) or {}
        most = ", ".join(f"{held[n]} at {format_length(n)}" for n in lengths)
        raise UserError(
            f"{family_name}: {params['facts']} facts fit in none of the lengths (at most {most}): "
            "give fewer facts or longer lengths"
        )
    return fitting


def parse_facts(text: str) -> list[int]:
    """`1,4,16,64` -> [1, 4, 16, 64]; anything but positive whole numbers is a one-line error."""
    items = split_items(text, "--facts")
    if not items or not all(item.isdigit() and int(item) > 0 for item in items):
        raise UserError(f"invalid --facts {text!r}: positive whole numbers, e.g. 1,4,16,64")
    return sorted({int(item) for item in items})


def left_out(family_name: str, params: dict[str, Any], lengths: list[int]) -> list[str]:
    """`1024 facts at 8K (holds 285)` for each length the task's facts do not fit."""
    held = facts_held(family_name, params, lengths) or {}
    return [
        f"{params['facts']} facts at {format_length(n)} (holds {held[n]})"
        for n in lengths
        if n in held and params["facts"] > held[n]
    ]
