"""Command-line flags made from the pydantic fields that declare each option once (name, default,
help), and the parsed values handed back as a dict for the same model to validate."""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_UNSET = None
_METAVARS = {
    "timeout": "S",
    "timeout_per_1k": "S",
    "resume": "RUN_DIR",
    "results_dir": "DIR",
    "api_key_env": "VAR",
    "token_counter": "SPEC",
    "concurrency": "N",
    "retries": "N",
    "samples": "N",
    "seed": "N",
    "config": "CONFIG_JSON",
    "answer_room": "N",
    "answer_tokens": "N",
    "reasoning_tokens": "N",
    "max_samples": "N",
    "min_samples": "N",
    "against": "BASELINE_RUN",
    "fail_if_drop": "MARGIN",
    "kl_margin": "NATS",
    "junit": "FILE",
    "summary_md": "FILE",
    "threshold": "ACC",
    "precision": "HALF_WIDTH",
    "batch": "N",
    "prefill_rate": "TOK_S",
    "probe_up_to": "LENGTH",
    "gpus": "N",
    "gpu_mem": "SIZE",
    "weights": "SIZE",
    "util": "FRACTION",
    "needles": "FILE",
    "judge_endpoint": "URL",
    "judge_model": "NAME",
    "baseline_endpoint": "URL",
    "facts": "N,N,...",
    "question_positions": "POS,POS",
    "include": "PATH",
    "contexts": "LENGTHS",
    "cache_dtype": "DTYPE",
    "state_dtype": "DTYPE",
    "mla_cache": "KIND",
    "layer_pattern": "PATTERN",
    "weights_from": "DIR",
    "out_dir": "DIR",
    "source": "SUITE_OR_RUN",
    "base_url": "URL",
    "top_logprobs": "K",
    "session_header": "NAME",
}


class JsonOutput(BaseModel):
    """`--json`: a command's report printed as JSON instead of a table."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    as_json: bool = Field(False, alias="json", description="print the report as JSON")


class TableHelpFormatter(argparse.HelpFormatter):
    """argparse's help, with a text of several lines (the table of exit codes) kept a line each, a long line
    wrapped under its second column; a one-line text is wrapped as argparse does."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        out = []
        for line in text.splitlines():
            row = re.match(r"\s+\S+\s+", line)  # an indented row: its meaning's column
            hang = " " * len(row.group()) if row else ""
            out += textwrap.wrap(
                line.strip(),
                width,
                initial_indent=indent + line[: len(line) - len(line.lstrip())],
                subsequent_indent=indent + hang,
            ) or [""]
        return "\n".join(out)


def exit_codes_epilog(command: str | None = None) -> dict[str, Any]:
    """The keyword arguments that give a parser the table of exit codes (`tasks/exit_codes.py`) as its epilog."""
    from ctxprobe.tasks.exit_codes import render_exit_codes

    return {"epilog": render_exit_codes(command), "formatter_class": TableHelpFormatter}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


class DeprecatedFlag(argparse.Action):
    """A flag's old name, kept so that scripts written with it still work: read as the new one, with a one-line
    note naming it (`renamed` in `add_model_args`), and left out of `--help`."""

    def __init__(self, option_strings: list[str], dest: str, instead: str, **kwargs: Any) -> None:
        self.instead = instead
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(
            f"ctxprobe: warning: {option_string} is deprecated: it is {self.instead} now (the same meaning)",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_model_args(
    group: Any,
    fields: Mapping[str, Any],
    *,
    repeat: dict[str, str] | None = None,
    positional: tuple[str, ...] = (),
    metavars: Mapping[str, str] | None = None,
    renamed: Mapping[str, str] | None = None,
) -> None:
    """One flag per field (named by its alias where it has one): booleans are switches, lists repeat
    (`--endpoint A --endpoint B`), Literal fields get choices; the `positional` fields are arguments (a list
    one takes one or more). Defaults stay the model's: an unset flag is left out of the values. `metavars`
    (by field name) are the caller's own, e.g. a launcher's (runners/launchers/), before the common ones.
    `renamed` (field name: flag) gives a field's flag a name of its own where its usual one means another
    thing in another subcommand (one name, one meaning); the usual name stays as a `DeprecatedFlag`."""
    repeat = repeat or {}
    renamed = renamed or {}
    known = {**_METAVARS, **(metavars or {})}
    for name in positional:
        field = fields[name]
        many = typing.get_origin(field.annotation) is list
        group.add_argument(
            name,
            nargs="+" if many else None,
            help=field.description or "",
            metavar=name.rstrip("s") if many else known.get(name),
        )
    for name, field in fields.items():
        if name in positional:
            continue
        help_text = field.description or ""
        default = field.get_default(call_default_factory=True)
        if default not in (None, "", [], False):
            help_text += f" (default: {default})"
        kwargs: dict[str, Any] = {"dest": name, "help": help_text, "default": _UNSET}
        annotation = field.annotation
        if annotation is bool:
            kwargs.update(action="store_true", default=_UNSET)
        elif _optional_bool(annotation):  # on, off, or left to the run: --name / --no-name
            kwargs.update(action=argparse.BooleanOptionalAction, default=_UNSET)
        elif name in repeat or typing.get_origin(annotation) is list:
            group.add_argument(
                repeat.get(name, _flag(name)),
                action="append",
                metavar=known.get(name, name.rstrip("s").upper()),
                **kwargs,
            )
            continue
        else:
            choices = _literal_choices(annotation)
            if choices:
                kwargs["choices"] = choices
            kind = _scalar(annotation)
            if kind is not None:
                kwargs["type"] = kind
            kwargs["metavar"] = None if choices else known.get(name, name.upper())
        if name in renamed:  # a value flag (not a switch): the old name reads the same value
            group.add_argument(
                _flag(field.alias or name),
                action=DeprecatedFlag,
                instead=renamed[name],
                **{**kwargs, "help": argparse.SUPPRESS},
            )
        group.add_argument(renamed.get(name, _flag(field.alias or name)), **kwargs)


def model_values(args: argparse.Namespace, fields: dict[str, Any]) -> dict[str, Any]:
    """The flags the user gave, by field name (unset flags are left to the model's defaults)."""
    return {name: getattr(args, name) for name in fields if getattr(args, name, None) is not None}


def _optional_bool(annotation: Any) -> bool:
    return set(typing.get_args(annotation)) == {bool, type(None)}


def _literal_choices(annotation: Any) -> list[str] | None:
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return list(typing.get_args(arg))
    return None


def number(text: str) -> float:
    """A flag's real number: NaN and infinities are refused (`--timeout nan` would never time out, and
    compare as false with every bound)."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _scalar(annotation: Any) -> Any:
    if annotation is int or int in typing.get_args(annotation):
        return int
    if annotation is float or float in typing.get_args(annotation):
        return number
    return None
