"""The limits on what a suite may ask, checked before anything is built or sent. Past them a run does not
fail loudly on its own: a length of a billion tokens or a depth step of 1e-7 grows memory until the machine
gives up, and a million-sample suite runs for days. Each is refused in one line naming the limit."""

from __future__ import annotations

import math

from ctxprobe.tasks.errors import UserError

MAX_CONTEXT_TOKENS = 16 * 1024 * 1024  # 16M: above every served context today (10M is the largest claimed)
MAX_DEPTHS = 1001  # a depth every 0.1 percent
MAX_SEED = 2**32 - 1
MAX_SUITE_SAMPLES = 100_000  # a sample every second for more than a day; split larger sweeps into runs
MAX_SUITE_TASKS = 10_000  # a suite's task list (each task is a family x parameters: 10k is already a sweep)
MAX_SUITE_BYTES = 1024 * 1024  # a suite file: YAML that large takes seconds just to read


def check_length(value: int, text: object) -> int:
    if value > MAX_CONTEXT_TOKENS:
        raise UserError(
            f"invalid length {text!r}: {value:,} tokens is above the largest ctxprobe builds "
            f"({MAX_CONTEXT_TOKENS:,} = 16M)"
        )
    return value


def depth_count(start: float, stop: float, step: float, text: str) -> int:
    """How many depths `start:stop:step` makes, refusing a range that is not finite, empty or too fine."""
    if not all(math.isfinite(x) for x in (start, stop)) or math.isnan(step):
        raise UserError(f"invalid depth range {text!r}: start, stop and step must be numbers")
    if stop < start:
        raise UserError(f"invalid depth range {text!r}: stop is below start")
    n = 1 if math.isinf(step) else math.floor((stop - start) / step + 1e-9) + 1
    if n > MAX_DEPTHS:
        raise UserError(
            f"invalid depth range {text!r}: it makes {n:,} depths, at most {MAX_DEPTHS} are allowed "
            f"(a step of 0.1 or more)"
        )
    return n


def check_seed(seed: int) -> int:
    if not 0 <= seed <= MAX_SEED:
        raise UserError(f"invalid seed {seed}: use 0 to {MAX_SEED:,}")
    return seed


def check_suite_size(samples: int, name: str) -> None:
    if samples > MAX_SUITE_SAMPLES:
        raise UserError(
            f"suite {name} makes {samples:,} samples, more than {MAX_SUITE_SAMPLES:,} in one run: "
            "fewer lengths, depths or samples per cell, or several runs"
        )
