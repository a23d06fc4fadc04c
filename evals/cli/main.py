"""`ctxprobe` command line: one parser, one subcommand module each under evals/cli/ (only the one named is
imported). User errors end in one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from ctxprobe.tasks.errors import ExitError, UserError

DESCRIPTION = (
    "Long-context tests of an OpenAI-compatible endpoint (default: an embedded llama.cpp engine): accuracy "
    "by depth x context, builds compared sample by sample, the context length that holds."
)

# Each module defines register(subparsers) -> None, which sets `func` on its parser.
COMMANDS = (
    "run",
    "show",
    "check",
    "tasks",
    "prompt",
    "limit",
    "plan",
    "compare",
    "history",
    "report",
    "export",
    "import_lm_eval",
    "doctor",
)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2, and refuses an empty value: `--lengths ''`
    (as an unset shell variable makes it) would otherwise fall back to the default and run another plan than
    the one asked for, with no word said."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extra = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(parsed, action.dest, None)
            values = value if isinstance(value, list) else [value]
            if action.default is not value and any(isinstance(v, str) and not v.strip() for v in values):
                if action.option_strings:
                    self.error(
                        f"{action.option_strings[-1]} is empty: give it a value, or leave it out for its default"
                    )
                self.error(f"{action.metavar or action.dest} is empty: give it a value")
        return parsed, extra


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. `command` (as typed: `run`, `import-lm-eval`): only that subcommand is
    registered, so only its module is imported (`ctxprobe run` loads nothing of `show`, `compare`, `tasks`...);
    None, or a name that is no command, registers every one (the top-level help, an unknown command's error)."""
    from ctxprobe.evals.cli.options import exit_codes_epilog

    parser = OneLineParser(prog="ctxprobe", description=DESCRIPTION, **exit_codes_epilog())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    chosen = [name for name in COMMANDS if name.replace("_", "-") == command]
    for name in chosen or COMMANDS:
        try:
            module = importlib.import_module(f"ctxprobe.evals.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"ctxprobe.evals.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning on the command line is one line: what, not where in the code."""
    print(f"ctxprobe: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = _one_line_warning
    argv = list(sys.argv[1:] if argv is None else argv)
    try:  # a launcher plugin that does not load is bad input too (runners/launchers/)
        parser = build_parser(argv[0] if argv else None)
    except UserError as exc:
        print(f"ctxprobe: error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except ExitError as exc:  # a file that cannot be written, a gate that refuses, an endpoint that does not
        print(f"ctxprobe: error: {exc}", file=sys.stderr)  # answer in time: each its own code
        return exc.exit_code
    except UserError as exc:
        print(f"ctxprobe: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxprobe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`ctxprobe ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
