"""The embedded engine's threads when the user does not say (runners/cpu_share.py): the cores other processes
leave idle, measured from /proc/stat over a short look, with ctxprobe's own CPU time not counted as theirs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ctxprobe.runners import cpu_share
from ctxprobe.runners.cpu_share import busy_elsewhere, cpu_jiffies, engine_threads


def stat(*cores: tuple[int, int]) -> str:
    """/proc/stat text whose cpuN lines have these (busy, idle) ticks, busy split over user and system and
    idle over idle and iowait, as the kernel writes them."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for n, (busy, idle) in enumerate(cores):
        user, system = busy - busy // 3, busy // 3
        lines.append(f"cpu{n} {user} 0 {system} {idle - idle // 4} {idle // 4} 0 0 0 0 0")
    return "\n".join([*lines, "intr 1 2 3", "ctxt 99"])


def test_the_ticks_of_the_asked_cores_are_summed_and_a_missing_core_is_no_reading() -> None:
    text = stat((300, 700), (50, 950))
    assert cpu_jiffies(text, [0, 1]) == (350, 2000)
    assert cpu_jiffies(text, [1]) == (50, 1000)
    assert cpu_jiffies(text, [0, 7]) is None


def test_others_busy_cores_are_measured_and_the_own_processs_time_is_not_theirs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cpu_share.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    # over the look each core counted 100 ticks (1 s at 100 Hz): core 0 fully busy, core 1 busy 60 of 100
    readings = iter([stat((1000, 1000), (500, 1500)), stat((1100, 1000), (560, 1540))])
    own = iter([10.0, 10.4])  # 0.4 s of the busy time was this process's own
    busy = busy_elsewhere(1.0, read=lambda: next(readings), own_cpu_s=lambda: next(own), sleep=lambda _s: None)
    assert busy == pytest.approx(1.6 - 0.4)
    unreadable = busy_elsewhere(1.0, read=lambda: "no cpu lines", sleep=lambda _s: None)
    assert unreadable is None


@pytest.mark.parametrize(
    ("busy", "cores", "threads"),
    [
        (None, 2, None),  # nothing measured: llama.cpp's own choice
        (0.0, 2, None),  # every core idle: the same
        (0.4, 2, None),  # less than half a core is taken: still every core
        (0.6, 2, 1),
        (2.0, 2, 1),  # every core busy: one thread, never none
        (3.7, 16, 12),
    ],
)
def test_the_engine_gets_the_cores_others_leave_idle_and_at_least_one(
    busy: float | None, cores: int, threads: int | None
) -> None:
    assert engine_threads(busy, cores) == threads


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="the look reads Linux's /proc/stat")
def test_a_busy_process_beside_is_seen_on_this_machine() -> None:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        busy = busy_elsewhere(0.5)
    finally:
        spinner.kill()
        spinner.wait()
    assert busy is not None and busy >= 0.5  # the spinner held most of a core (more if the machine is loaded)
