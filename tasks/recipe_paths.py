"""The local files a recipe makes ctxprobe read, and the check that keeps them inside the folders the user
names. A recipe is data that may come from elsewhere (a run folder someone shared, a recipe JSON in an
issue): its `file:PATH` or `dir:PATH` haystack, a local `hf:PATH` dataset, would otherwise make `ctxprobe prompt`
print any file the user can read (`file:/etc/shadow`, `file:~/.ssh/id_rsa`) as a haystack. Every file read is
compared by its real path (links followed): the folder named, and each file read from it, so a link inside an
allowed folder that points out of it is refused too."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe

PATH_KINDS = ("file:", "dir:", "hf:")  # haystack kinds, and dataset parameters, that name a local path


def _named(spec: str) -> Path | None:
    """The local path `spec` names (`file:PATH`, `dir:PATH`, `hf:PATH[:split[:column]]` when PATH is on disk)."""
    kind = next((k for k in PATH_KINDS if spec.startswith(k)), None)
    if kind is None or not spec[len(kind) :]:
        return None
    rest = spec[len(kind) :]
    if kind == "hf:":  # a hub name is not a local file; a local parquet file or folder is
        rest = rest.split(":")[0]
        path = Path(rest).expanduser()
        return path if path.exists() or rest.startswith(("/", ".", "~")) else None
    return Path(rest).expanduser()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def local_paths(recipe: Recipe) -> list[tuple[str, Path]]:
    """What a recipe reads from disk: (the spec as the recipe gives it, its path)."""
    found = []
    for spec in [recipe.haystack, *_strings(recipe.params)]:
        path = _named(spec)
        if path is not None:
            found.append((spec, path))
    return found


def files_read(spec: str, path: Path) -> Iterator[Path]:
    """`path`, then, where it is a folder, every file a haystack or dataset reads from it (the readers' own
    lists), listed only once the folder itself has been let through."""
    from ctxprobe.tasks.haystack.user_text import dir_files, local_parquet

    yield path
    if path.is_dir():
        yield from ([p for _, p in dir_files(path)] if spec.startswith("dir:") else local_parquet(str(path)))


def check_paths_allowed(recipe: Recipe, allowed: Sequence[str | Path], flag: str = "--allow-path") -> None:
    """Refuse, in one line, a recipe that reads a local file outside every folder of `allowed`."""
    roots = [Path(a).expanduser().resolve() for a in allowed]
    for spec, path in local_paths(recipe):
        for read in files_read(spec, path):
            real = read.resolve()
            if any(real == root or root in real.parents for root in roots):
                continue
            shown = repr(spec) if read == path else f"{spec!r} (its file {read} links to {real})"
            where = (
                f"outside the folders given with {flag} ({', '.join(map(str, roots))})"
                if roots
                else f"and no folder is allowed ({flag} DIR names one)"
            )
            raise UserError(
                f"the recipe reads {shown}, {where}: a recipe from elsewhere may not make ctxprobe read "
                f"your files; add {flag} with the folder that holds it if you mean it to be read"
            )
