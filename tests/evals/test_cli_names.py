"""One name, one meaning on the command line: `--endpoint` wherever a command talks to an endpoint (doctor's
positional kept), `limit --min-accuracy` where `--threshold` is run's stopping threshold (the old name still
read, with a note), and one table of exit codes that every `--help` showing exit codes takes its text from."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import build_parser, main
from ctxprobe.tasks.exit_codes import EXIT_CODES, ExitCode, exit_codes_for, markdown_exit_codes
from tests.runners.fake_engine import FakeEngine


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _flags(command: str) -> dict[str, str]:
    """The flags `--help` shows, with their help."""
    return {
        o: a.help or "" for a in _subparser(command)._actions for o in a.option_strings if a.help != argparse.SUPPRESS
    }


def test_doctor_takes_its_endpoint_as_endpoint_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """(The positional is tests/evals/test_doctor.py's; both given alike are one endpoint.)"""
    with FakeEngine("vllm", context_length=8192, answer="ready") as engine:
        code = main(["doctor", "--no-context-check", "--json", "--endpoint", engine.url, engine.url])
    assert code == 0 and f'"base_url": "{engine.url}"' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["http://127.0.0.1:9", "--endpoint", "http://127.0.0.1:8"], "two endpoints"),
        ([], "no endpoint"),
    ],
)
def test_doctor_refuses_two_endpoints_or_none_in_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_every_command_that_talks_to_an_endpoint_takes_endpoint() -> None:
    for command in ("run", "limit", "doctor"):
        assert "--endpoint" in _flags(command), command


def test_limit_names_its_accuracy_bar_apart_from_runs_stopping_threshold() -> None:
    assert "--threshold" in _flags("run") and "--threshold" not in _flags("limit")
    assert "accuracy a length must reach" in _flags("limit")["--min-accuracy"]


def test_limits_old_threshold_flag_still_works_and_says_it_is_deprecated(capsys: pytest.CaptureFixture[str]) -> None:
    old = build_parser("limit").parse_args(["limit", "--threshold", "0.7"])
    new = build_parser("limit").parse_args(["limit", "--min-accuracy", "0.7"])
    err = capsys.readouterr().err.strip().splitlines()
    assert old.threshold == new.threshold == 0.7
    assert len(err) == 1 and "--threshold is deprecated" in err[0] and "--min-accuracy" in err[0]


def test_no_flag_name_is_two_switches_of_different_kinds_across_subcommands() -> None:
    """A flag that takes a value in one subcommand and is a switch in another reads as two things."""
    kinds: dict[str, set[bool]] = {}
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in sub.choices.values():
        for action in command._actions:
            for flag in action.option_strings:
                kinds.setdefault(flag, set()).add(action.nargs == 0)
    assert [flag for flag, kind in kinds.items() if len(kind) > 1] == []


def test_the_docs_show_the_same_table() -> None:
    """docs/run-folder.md's table is `markdown_exit_codes()`; rewrite it from there when the table changes."""
    page = (Path(__file__).parents[2] / "docs" / "run-folder.md").read_text()
    shown = page.split("<!-- exit codes: generated from tasks/exit_codes.py", 1)[1].split("-->", 1)[1]
    assert shown.split("<!-- end of exit codes -->")[0].strip() == markdown_exit_codes()


@pytest.mark.parametrize("command", [None, "run", "compare", "limit", "doctor", "check"])
def test_help_shows_the_one_table_of_exit_codes(command: str | None) -> None:
    parser = build_parser(command) if command is None else _subparser(command)
    text = " ".join(parser.format_help().split())  # unwrapped
    rows = exit_codes_for(command)
    assert rows and all(f"{code} {meaning}" in text for code, meaning in rows)
    # the codes the code returns are the table's, and each command's UNDECIDED is the same code
    assert {row.code for row in EXIT_CODES} == set(ExitCode)
    if command in ("run", "compare"):
        assert f"{ExitCode.UNDECIDED} a gate is UNDECIDED" in text
