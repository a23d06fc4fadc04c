"""A dataset the user brings (`dataset: hf:PATH` of the qa, mrcr and graphwalk families) is identified by its
content, never by where it lies: when a run plans its suite, each such task gets `dataset_sha256`, the sha256
of the file's bytes (a folder: of its .parquet files' relative names and bytes, in the order they are read).
The recipe's identity keys digest that and leave the path out (`tasks.identity.identity_params`), so the same
file anywhere gives the same sample ids, needles and prompts, and two runs of it pair; the path stays in the
recipe only as where to read it. A file whose content is not the recipe's is refused, never read in its place.

Recipes written before digests (a `dataset` path and no `dataset_sha256`) keep the identity they had, path
included: their samples were drawn by it, so they rebuild byte-identical prompts and keep their ids (load,
show, resume, and a new run `--against` them, which rebuilds their samples from the same file)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field

from ctxprobe.tasks.data_files import data_path
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import DATASET_DIGEST
from ctxprobe.tasks.registry import get_family

CHUNK = 1 << 20
_LOCATIONS: dict[str, Path] = {}  # digest -> the last path seen with that content in this process


def digest_field() -> Any:
    """The `dataset_sha256` parameter of a family that reads a dataset (filled in when the suite is planned)."""
    return Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="the dataset's content sha256, filled in when the "
        "suite is planned: what identifies the dataset (`dataset` is only where it is read)",
    )


def content_sha256(path: Path) -> str:
    """The sha256 of a dataset's content: a file's bytes; a folder's .parquet files, each by its name relative
    to the folder and its bytes, sorted (the order the readers read them). Cached by size and time of change."""
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        key = tuple((f.relative_to(path).as_posix(), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
        return _folder_sha256(str(path.resolve()), key)
    stat = path.stat()
    return _file_sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime: int) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(CHUNK):
                digest.update(block)
    except OSError as error:
        raise UserError(f"dataset {path}: cannot read it: {error.strerror or error}") from None
    return digest.hexdigest()


@lru_cache(maxsize=16)
def _folder_sha256(path: str, files: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, size, mtime in files:
        digest.update(f"{name}\0{_file_sha256(str(Path(path) / name), size, mtime)}\n".encode())
    return digest.hexdigest()


def _path_of(spec: str, what: str) -> Path:
    if not spec.startswith("hf:") or not spec[3:]:
        raise UserError(f"invalid {what} dataset {spec!r}: use hf:PATH (a local file or a folder)")
    return data_path(Path(spec[3:]).expanduser(), f"{what} dataset {spec!r}")


def pinned(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The suite's tasks, each of a family with a `dataset_sha256` parameter that names a dataset and no digest
    given the digest of that dataset's content (read once per file version); the location is remembered for
    this process (`located`)."""
    out = []
    for task in tasks:
        params = task.get("params") or {}
        spec = params.get("dataset")
        if (
            isinstance(spec, str)
            and not params.get(DATASET_DIGEST)
            and DATASET_DIGEST in get_family(task["family"]).Params.model_fields
        ):
            path = _path_of(spec, task["family"])
            digest = content_sha256(path)
            _LOCATIONS[digest] = path
            task = {**task, "params": {**params, DATASET_DIGEST: digest}}
        out.append(task)
    return out


def located(spec: str, digest: str | None, what: str) -> Path:
    """Where to read the dataset a recipe names: its path, checked to hold the content `digest` (none: a recipe
    from before digests, read at its path); where that path is gone or holds other content, a path seen with
    that content in this process. Otherwise a one-line error naming both."""
    if digest is None:
        return _path_of(spec, what)
    path = Path(spec[3:]).expanduser() if spec.startswith("hf:") else None
    if path is not None and path.exists() and content_sha256(data_path(path, f"{what} dataset {spec!r}")) == digest:
        return path
    known = _LOCATIONS.get(digest)
    if known is not None and known.exists() and content_sha256(known) == digest:
        return known
    state = "holds other content" if path is not None and path.exists() else "is not there"
    raise UserError(
        f"{what} dataset {spec!r} {state}: the recipe names the dataset of content sha256 "
        f"{digest[:12]}…; give that file (hf:PATH) where it lies now"
    )
