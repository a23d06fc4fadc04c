"""Parsing of token lengths (`32k`, `128K`, `1m`, `262144`) and depths (0-100)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TypeVar, cast

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.items import split_items
from ctxprobe.tasks.limits import MAX_DEPTHS, check_length, depth_count

_LENGTH = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
# k and K are 1024 (a "32k context" is 32,768 tokens); m is 1,000,000 as model cards say "1M",
# M is 2**20 -- the same m/M convention as vLLM's --max-model-len.
_SCALE = {"": 1, "k": 1024, "K": 1024, "m": 1_000_000, "M": 1024 * 1024}


def parse_length(text: str | int) -> int:
    """`32k`/`32K` -> 32768, `1m` -> 1000000, `1M` -> 1048576, `262144` -> 262144, `1.5k` -> 1536. A length
    that is not a whole number of tokens (`1024.7`, `1.3k`) is refused: every prompt is built to its exact length."""
    if isinstance(text, bool):
        raise UserError(f"invalid length {text!r}: use a token count like 4096, 32k or 1m")
    if isinstance(text, int):
        value = text
    else:
        match = _LENGTH.match(str(text))
        if not match:
            raise UserError(f"invalid length {text!r}: use a token count like 4096, 32k or 1m")
        exact = Decimal(match.group(1)) * _SCALE[match.group(2)]
        if exact != exact.to_integral_value():
            raise UserError(f"invalid length {text!r}: {exact} is not a whole number of tokens")
        value = int(exact)
    if value <= 0:
        raise UserError(f"invalid length {text!r}: must be positive")
    return check_length(value, text)


def parse_lengths(text: str) -> list[int]:
    """A comma-separated list of lengths (at least one)."""
    out = [parse_length(part) for part in split_items(text, "lengths")]
    if not out:
        raise UserError(f"no lengths in {text!r}: give at least one, e.g. 4k or 1k,2k,4k")
    return distinct(out, text, "length", "tokens")


V = TypeVar("V", int, float)


def distinct(values: Sequence[V], text: object, what: str, unit: str) -> list[V]:
    """`values` (parsed from `text`), refused in one line when one is given twice, however it was written
    (`1k,1024`): a grid cell given twice would be sent and recorded twice."""
    seen: set[V] = set()
    for value in values:
        if value in seen:
            raise UserError(f"{what}s {_shown(text)}: {what} {value:g} {unit} is given twice: give each {what} once")
        seen.add(value)
    return list(values)


def _shown(text: object) -> str:
    return repr(text) if isinstance(text, str) else "[" + ", ".join(map(str, cast(Iterable[object], text))) + "]"


def check_depth(depth: float) -> float:
    """A depth in percent of the haystack, 0 (start) to 100 (end)."""
    if isinstance(depth, bool) or not 0.0 <= float(depth) <= 100.0:
        raise UserError(f"depth {depth} is outside 0-100")
    return float(depth)


def parse_depths(text: str) -> list[float]:
    """`0,50,100` or a range `0:100:10` (start:stop:step, stop included)."""
    text = str(text).strip()
    if ":" in text:
        try:
            start, stop, step = (float(p) for p in text.split(":"))
        except ValueError:
            raise UserError(f"invalid depth range {text!r}: use start:stop:step, e.g. 0:100:10") from None
        if step <= 0:
            raise UserError(f"invalid depth range {text!r}: step must be positive")
        n = depth_count(start, stop, step, text)
        return check_depth_list(
            [check_depth(round(start + i * step, 6)) if i else check_depth(start) for i in range(n)], text
        )
    try:
        out = [check_depth(float(p)) for p in split_items(text, "depths")]
    except ValueError:
        raise UserError(f"invalid depths {text!r}: use numbers 0-100, e.g. 0,50,100") from None
    return check_depth_list(out, text)


def check_depth_list(depths: list[float], text: object) -> list[float]:
    """At least one depth, at most `MAX_DEPTHS`, none twice."""
    if not depths:
        raise UserError(f"no depths in {text!r}: give at least one, e.g. 50 or 0,50,100 or 0:100:10")
    if len(depths) > MAX_DEPTHS:
        raise UserError(f"{len(depths):,} depths given, at most {MAX_DEPTHS} are allowed")
    return distinct(depths, text, "depth", "percent")


def format_length(tokens: int) -> str:
    """Short label: 32768 -> '32K', 1000000 -> '1m', 1048576 -> '1M', 4000 -> '4000'."""
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000}m"
    if tokens % (1024 * 1024) == 0:
        return f"{tokens // (1024 * 1024)}M"
    if tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    return str(tokens)
