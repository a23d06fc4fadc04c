"""The CPU threads the embedded engine starts with when the user does not say (`--threads`).

llama.cpp's threads meet at a barrier after every operation of a forward pass, so a thread that loses its core
to another process stalls every other thread with it. On a 2-core machine with two CPU-bound processes beside
the engine, the quick suite (benchmarks/bench_quick_start.py) did not finish in 330 s with 2 threads; with 1 it
took 100 s. On the idle machine 2 threads took 59 s and 1 took 90 s. So the engine gets the cores that other
processes left idle over a short look before it starts, at least one; where every core is idle, or the look
cannot be taken (no /proc/stat), llama.cpp chooses as it always does. ctxprobe's own CPU time in that look
(building prompts) does not count as another process's: it waits while the engine computes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

LOOK_S = 0.25  # how long the busy cores are measured before the engine starts
PROC_STAT = Path("/proc/stat")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc/stat's unit, per second


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_jiffies(text: str, cores: Iterable[int]) -> tuple[int, int] | None:
    """(busy, total) clock ticks of these cores, summed, from /proc/stat's text; None where a core's line is
    missing. Idle is `idle` plus `iowait`; `guest` time is already counted in `user`, so it is left out."""
    lines = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            lines[int(name[3:])] = [int(field) for field in rest.split()[:8]]
    busy = total = 0
    for core in cores:
        fields = lines.get(core)
        if fields is None or len(fields) < 5:
            return None
        idle = fields[3] + fields[4]
        total += sum(fields)
        busy += sum(fields) - idle
    return busy, total


def busy_elsewhere(
    look_s: float = LOOK_S,
    *,
    read: Callable[[], str] | None = None,
    own_cpu_s: Callable[[], float] = time.process_time,
    sleep: Callable[[float], None] = time.sleep,
) -> float | None:
    """Cores kept busy by other processes over `look_s` seconds (0.0 to the usable cores); None where it
    cannot be measured."""
    read = read or (lambda: PROC_STAT.read_text())
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else range(usable_cores())
    try:
        own0, first = own_cpu_s(), cpu_jiffies(read(), cores)
        sleep(look_s)
        own1, second = own_cpu_s(), cpu_jiffies(read(), cores)
    except OSError:
        return None
    if first is None or second is None or second[1] <= first[1]:
        return None
    busy, total = second[0] - first[0], second[1] - first[1]
    per_core = total / len(cores)  # the look's wall time in clock ticks, as the kernel counted it on each core
    own = (own1 - own0) * CLOCK_TICKS  # this process's CPU time in the same ticks
    return max(0.0, min(float(len(cores)), (busy - own) / per_core))


def engine_threads(busy: float | None, cores: int) -> int | None:
    """The threads for the engine: the cores left idle by others (at least one), or None (llama.cpp's own
    choice) where every core is free or nothing was measured."""
    if busy is None:
        return None
    free = cores - int(busy + 0.5)
    return None if free >= cores else max(1, free)


def threads_for_engine() -> int | None:
    """`engine_threads` of a look taken now."""
    return engine_threads(busy_elsewhere(), usable_cores())
