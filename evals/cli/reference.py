"""The command-line reference of the docs site (docs/reference/cli.md), rendered from the argparse parsers
themselves: each subcommand's `--help` at a fixed width, so the page cannot drift from what `--help` prints
(tests/evals/test_cli_reference.py holds the committed page against a fresh rendering).

    python -m ctxprobe.evals.cli.reference > docs/reference/cli.md
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from ctxprobe.evals.cli.main import build_parser

WIDTH = 100  # argparse wraps --help to $COLUMNS; the page is rendered at this width wherever it is made
HEADER = """# Command-line reference

Every subcommand's `--help`, as it prints it at a width of {width} columns. This page is generated from the
parsers: `python -m ctxprobe.evals.cli.reference > docs/reference/cli.md` rewrites it, and a test fails when it
and `--help` differ.
"""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands' parsers by name, in the order `ctxprobe --help` lists them."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _help(parser: argparse.ArgumentParser) -> str:
    """`parser`'s --help text at WIDTH columns."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        return parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _sections() -> Iterator[str]:
    parser = build_parser()
    yield HEADER.format(width=WIDTH)
    yield f"## ctxprobe\n\n```text\n{_help(parser).rstrip()}\n```\n"
    for name, sub in _subparsers(parser).items():
        yield f"## {name}\n\n```text\n{_help(sub).rstrip()}\n```\n"


def render() -> str:
    """The whole reference page, in markdown."""
    return "\n".join(_sections())


if __name__ == "__main__":
    sys.stdout.write(render())
