"""Every file ctxprobe writes for its user goes through `replace_file`: the report, the JUnit and markdown gate
outputs, compare's and history's files, the export, the run's tables and charts.

Writing is done as a temporary file beside the target, then `os.replace`. That is atomic for a regular file,
but it would also replace whatever else stands at the name: run as root, `-o /dev/null` would swap the device
node for an HTML file. So a target that exists must be a regular file (a symbolic link, a device, a FIFO, a
socket or a folder is refused in one line, exit 2, and left as it is), and a failure of the file system (read
only, full, no permission) is `WriteFailed` (exit 4) with the temporary file removed and the old file kept."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxprobe.evals.records.write_errors import WriteFailed
from ctxprobe.tasks.errors import UserError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


@contextlib.contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """A block that writes under `path`: an OSError of the file system in it is `WriteFailed` (exit 4)."""
    try:
        yield
    except OSError as exc:
        raise WriteFailed(Path(path), exc) from None


def check_output_file(path: Path) -> None:
    """Refuse, in one line, a target that exists and is not a regular file (links are not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteFailed(Path(path), exc) from None
    for test, what in _KINDS:
        if test(mode):
            raise UserError(f"output {path} is {what}: ctxprobe writes only regular files; give another name")


def check_output_target(path: Path | str, flag: str) -> None:
    """Refuse, in one line naming `flag`, an output a command would fail to write only at its end (after a whole
    run): a target that is a folder or another non-regular file, or whose folder cannot be made or written
    (a file stands in its way, no permission). A missing folder that can be made is made when the file is."""
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise UserError(f"{flag} {path}: give a file name, not a folder")
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{flag} {path}: its folder cannot be made, {parent} is a file")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UserError(f"{flag} {path}: the folder {parent} is not writable")
            break
    try:
        check_output_file(path)
    except UserError as exc:
        raise UserError(f"{flag} {exc}".replace(f"{flag} output ", f"{flag} ", 1)) from None


def replace_file(path: Path | str, data: str | bytes) -> Path:
    """`data` (text as UTF-8) written whole at `path`: a reader sees the old file or the new one, never half."""
    path = Path(path)
    check_output_file(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise WriteFailed(path, exc) from None
    return path


def save_figure(fig: Figure, path: Path | str, **options: Any) -> Path:
    """A matplotlib figure saved as `replace_file` writes (the format from the file's suffix)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png", **options)
    return replace_file(path, buf.getvalue())


def make_folder(path: Path | str, *, exist_ok: bool = True) -> Path:
    """The folder at `path`, made with its parents; an existing non-folder refused in one line, a file system
    that refuses is `WriteFailed`. A link to a folder is a folder (results kept on another disk)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        check_output_file(path)
        raise UserError(f"output folder {path} is a file; give another name")
    try:
        path.mkdir(parents=True, exist_ok=exist_ok)
    except FileExistsError:  # a folder that must be new (exist_ok=False): the caller's to handle
        raise
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    return path
