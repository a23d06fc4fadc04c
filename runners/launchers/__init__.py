"""The engines ctxprobe starts, found by name (runners.launchers.base says what each holds). Every module of
this package is imported here, so a built-in launcher registers itself by being in the folder; a launcher in
another package is a module named under the `ctxprobe.launchers` entry point group, imported on first use:

    [project.entry-points."ctxprobe.launchers"]
    toy = "my_package.toy_launcher"

    launcher_for("vllm").serve(...)
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib import metadata

from ctxprobe.runners.launchers.base import (DEFAULT_LAUNCHER, Launch, Launcher, launcher, registered,
                                             unregister)
from ctxprobe.tasks.errors import UserError

__all__ = ["DEFAULT_LAUNCHER", "ENTRY_POINT_GROUP", "Launch", "Launcher", "discover", "launcher", "launcher_for",
           "launcher_names", "launchers", "unregister"]

ENTRY_POINT_GROUP = "ctxprobe.launchers"  # [project.entry-points."ctxprobe.launchers"] name = "module"

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")  # each launcher module registers its engine

_discovered = False


def discover() -> None:
    """Import the modules the entry points name, once per process (the built-in ones are imported above)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            point.load()
        except ImportError as exc:
            raise UserError(f"launcher plugin {point.name!r} ({point.value}) does not load: {exc}") from None


def launchers() -> list[Launcher]:
    """Every registered launcher, in the order the help shows them (`rank`, then name)."""
    discover()
    return sorted(registered().values(), key=lambda found: (found.rank, found.name))


def launcher_names() -> tuple[str, ...]:
    return tuple(found.name for found in launchers())


def launcher_for(name: str) -> Launcher:
    """The launcher of engine `name`; an unknown name is a user error that lists the known ones."""
    discover()
    found = registered()
    if name not in found:
        raise UserError(f"unknown engine {name!r} to start; known: {', '.join(launcher_names())}")
    return found[name]
