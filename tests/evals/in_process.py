"""The ctxprobe command line called in the test's own process (`main(argv)`), as the bad-input tests call it: a
process per case spent most of each case's time starting Python and importing ctxprobe. What a process alone
shows (its environment read at start, its imports) stays with the tests that start one."""

from __future__ import annotations

import signal

import pytest

from ctxprobe.evals.cli.main import main

SECONDS = 30  # a command that takes longer has hung


class Hung(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Hung(f"no answer in {SECONDS} s")


def ends(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`main(argv)`'s exit code (argparse's own refusals included), stdout and stderr; `Hung` past `SECONDS`."""
    capsys.readouterr()
    before = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    try:
        try:
            code = main(argv)
        except SystemExit as ended:  # argparse's own refusals
            code = int(ended.code or 0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    out = capsys.readouterr()
    return code, out.out, out.err
