"""The one exception type for bad user input: the CLI prints it as one line and exits 2."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class UserError(Exception):
    """Bad input from the user (unknown name, invalid length, missing file, malformed suite...)."""


class TooShort(UserError):
    """A length too short for a task's prompt (its question and needles alone take more): `ctxprobe limit`'s
    search takes the shortest length that is not as its lower end."""


class ExitError(Exception):
    """A failure that is not bad input, with a documented exit code of its own (a file that cannot be written,
    a gate that refuses to judge): the CLI prints it as one line and exits with `exit_code`."""

    exit_code = 1


def first_problem(exc: ValidationError) -> tuple[str, str, str]:
    """Where, what and which kind the first problem of a pydantic validation error is: one line's worth."""
    err = exc.errors()[0]
    return ".".join(str(p) for p in err["loc"]), err["msg"], err["type"]


MAX_USER_FILE_BYTES = 256 * 1024 * 1024  # a text file ctxprobe reads whole (a needle file, a model config)


def read_user_text(path: Path, where: str, max_bytes: int = MAX_USER_FILE_BYTES) -> str:
    """A text file the user named, as UTF-8; a missing, unreadable, non-UTF-8 or oversized file, or one that is
    not a regular file (a link to /dev/zero would be read for ever), is one UserError that starts with `where`
    (what the file is for, and its name)."""
    if not path.exists():
        raise UserError(f"{where}: no such file")
    if not path.is_file():
        raise UserError(f"{where}: not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise UserError(f"{where}: {size:,} bytes, more than the {max_bytes:,} ctxprobe reads")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{where}: not a UTF-8 text file") from None
    except OSError as error:
        raise UserError(f"{where}: cannot read it: {error.strerror or error}") from None


def validated(
    model: type[M], values: dict[str, Any], problem: str = "invalid option", flags: Mapping[str, str] | None = None
) -> M:
    """`model(**values)`, or one line naming the first bad option (`--concurrency: ...`; by its flag in `flags`
    where a command names the field's flag otherwise)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        where, msg, _ = first_problem(exc)
        flag = (flags or {}).get(where, f"--{where.replace('_', '-')}")
        raise UserError(f"{problem} {flag}: {msg}") from None
