"""A comma-separated flag value (`--lengths 1k,2k`, `--templates a,b`, `--params k=v,k=v`) read one way
everywhere: items stripped of white space, and an empty item (`1k,,2k`, a trailing comma) refused in one line
rather than dropped, since a typo there would otherwise change the plan without a word."""

from __future__ import annotations

from ctxprobe.tasks.errors import UserError


def split_items(text: object, what: str) -> list[str]:
    """The items of `text`; `what` names the value in the message (e.g. `--lengths`)."""
    items = [item.strip() for item in str(text).split(",")]
    if any(not item for item in items):
        raise UserError(f"{what} {str(text)!r} has an empty item: separate the values with single commas")
    return items
