"""The exit codes of every ctxprobe command, in one table: the codes the code returns (`ExitCode`) and the text
that `ctxprobe --help`, each gate's `--help` and the docs show (`render_exit_codes`), so that a code and what it
says cannot drift apart. A gate says UNDECIDED with one code wherever it runs (`run --against`, `compare`).

It sits beside `errors.py` in the lowest layer because every layer ends commands: the endpoint client raises
`ENDPOINT_LOST`, a run file that cannot be written `WRITE_FAILED`, the gates the rest."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal


class ExitCode(IntEnum):
    OK = 0
    SAMPLE_ERRORS = 1  # also: a gate FAILs a row, a check failed, damaged lines found
    BAD_INPUT = 2
    ENDPOINT_LOST = 3
    WRITE_FAILED = 4
    GATE_REFUSED = 5
    UNDECIDED = 6  # a gate: no row FAILs, some stay undecided
    ENGINE_FAULT = 7  # the cache-path control: the engine's prefix-cache path changes answers
    INTERRUPTED = 130


@dataclass(frozen=True)
class ExitMeaning:
    """What one code means to some commands (`commands` empty: to every command)."""

    code: ExitCode
    meaning: str
    commands: tuple[str, ...] = ()


EXIT_CODES = (
    ExitMeaning(ExitCode.OK, "ok"),
    ExitMeaning(ExitCode.OK, "a gate PASSes", ("run", "compare")),
    ExitMeaning(ExitCode.SAMPLE_ERRORS, "samples ended in errors (unless --allow-errors)", ("run",)),
    ExitMeaning(
        ExitCode.SAMPLE_ERRORS,
        "a gate FAILs a row (run --against, compare --fail-if-drop or --metric kl)",
        ("run", "compare"),
    ),
    ExitMeaning(
        ExitCode.SAMPLE_ERRORS,
        "a check failed (a --model the endpoint does not serve, a mode that does not "
        "answer; a missing feature is not a failure)",
        ("doctor",),
    ),
    ExitMeaning(ExitCode.SAMPLE_ERRORS, "damaged lines found", ("check",)),
    ExitMeaning(
        ExitCode.BAD_INPUT,
        "bad input: one line naming the problem, nothing sent, no folder left (an "
        "endpoint that does not answer at all before anything was sent included)",
    ),
    ExitMeaning(
        ExitCode.ENDPOINT_LOST,
        "the endpoint stopped serving mid-run (resume when it is back), or gave no complete answer within --timeout",
        ("run", "limit", "doctor"),
    ),
    ExitMeaning(ExitCode.WRITE_FAILED, "a file could not be written (disk full, read-only, no permission)"),
    ExitMeaning(
        ExitCode.GATE_REFUSED,
        "the gate refuses to judge (a run not finished, a run compared with itself, "
        "different suites or scoring rules, no answer probabilities for --metric p_answer or kl)",
        ("compare",),
    ),
    ExitMeaning(
        ExitCode.UNDECIDED,
        "a gate is UNDECIDED: no row FAILs, some stay undecided (--undecided fail|pass makes it 1 or 0)",
        ("run", "compare"),
    ),
    ExitMeaning(
        ExitCode.ENGINE_FAULT,
        "an engine fault: the cache-path control (--cache-check) found that the prefix-cache path changes answers",
        ("run",),
    ),
    ExitMeaning(ExitCode.INTERRUPTED, "interrupted (Ctrl-C or SIGTERM); finished samples are kept", ("run", "limit")),
)

Undecided = Literal["exit", "fail", "pass"]
UNDECIDED_HELP = "exit code when rows stay undecided: exit (6), fail (1), pass (0)"


def gate_exit_code(verdict: str | None, undecided: Undecided = "exit") -> ExitCode:
    """A gate's word as its exit code: FAIL 1, PASS 0, UNDECIDED 6 or what `undecided` makes it (`fail` 1,
    `pass` 0); no gate (None) 0."""
    if verdict == "UNDECIDED" and undecided != "exit":
        verdict = undecided.upper()
    return {None: ExitCode.OK, "PASS": ExitCode.OK, "FAIL": ExitCode.SAMPLE_ERRORS, "UNDECIDED": ExitCode.UNDECIDED}[
        verdict
    ]


def exit_codes_for(command: str | None = None) -> list[tuple[int, str]]:
    """(code, meaning) in code order: `command`'s own codes, or every command's with each meaning that is not
    every command's prefixed by the commands it belongs to."""
    rows: dict[int, list[str]] = {}
    for row in EXIT_CODES:
        if command is None:
            rows.setdefault(row.code, []).append(
                f"{', '.join(row.commands)}: {row.meaning}" if row.commands else row.meaning
            )
        elif not row.commands or command in row.commands:
            rows.setdefault(row.code, []).append(row.meaning)
    return [(code, "; ".join(meanings)) for code, meanings in sorted(rows.items())]


def render_exit_codes(command: str | None = None) -> str:
    """The table as text, one line a code (`--help`'s epilog: its formatter wraps each line under the meaning's
    column)."""
    title = "exit codes:" if command is None else f"exit codes of `ctxprobe {command}`:"
    return "\n".join([title, *(f"  {code:<5}{meaning}" for code, meaning in exit_codes_for(command))])


def markdown_exit_codes(command: str | None = None) -> str:
    """The table as markdown, for the docs."""
    rows = [f"| {code} | {meaning.replace('|', chr(92) + '|')} |" for code, meaning in exit_codes_for(command)]
    return "\n".join(["| code | meaning |", "|---|---|", *rows])
