"""The cache-path control's value as a run states it: `auto`, `off` or a share in (0, 1] of the requests a prefix
cache can serve. Two places state it: a suite's `cache_check:` (a suite too small for the control to decide
anything, like quick, turns it off where it is defined) and `run --cache-check`, which overrides the suite. Both
are read here, where suites are read, so that a bad value in either is one line before anything runs; what the
control does with the value is evals/run/cache_check.py."""

from __future__ import annotations

AUTO, OFF = "auto", "off"
ALLOWED = "auto, off or a share of the servable requests in (0, 1], e.g. 0.05"


def cache_check_value(value: object) -> str | None:
    """`auto`, `off`, or the share written back as a number; None where nothing is stated. YAML reads a bare
    `off` (or `no`) as false, which is `off` here. Raises ValueError for anything else."""
    if value is None:
        return None
    if value is False:
        return OFF
    text = str(value).strip().lower()
    if text in (AUTO, OFF):
        return text
    try:
        share = float(text) if not isinstance(value, bool) else float("nan")
    except ValueError:
        share = float("nan")
    if not 0 < share <= 1:
        shown = "true" if value is True else repr(value)  # YAML's true, yes or on
        raise ValueError(f"{shown} is not {ALLOWED}")
    return f"{share:g}"
