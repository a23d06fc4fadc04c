"""The engines ctxprobe starts, found by name (runners.launchers.base says what each holds). Every module of
this package is imported here, so a built-in launcher registers itself by being in the folder; a launcher in
another package is a module named under the `ctxprobe.launchers` entry point group, imported on first use:

    [project.entry-points."ctxprobe.launchers"]
    toy = "my_package.toy_launcher"

    launcher_for("vllm").serve(...)
"""

from __future__ import annotations

from ctxprobe.runners.launchers.base import (
    DEFAULT_LAUNCHER,
    ENTRY_POINT_GROUP,
    LAUNCHERS,
    Launch,
    Launcher,
    launcher,
    unregister,
)
from ctxprobe.tasks.plugins import import_modules

__all__ = [
    "DEFAULT_LAUNCHER",
    "ENTRY_POINT_GROUP",
    "LAUNCHERS",
    "Launch",
    "Launcher",
    "discover",
    "launcher",
    "launcher_for",
    "launcher_names",
    "launchers",
    "unregister",
]

import_modules(__name__, skip=("base",))  # each launcher module registers its engine


def discover() -> None:
    """Import the modules the entry points name, once per process (the built-in ones are imported above)."""
    LAUNCHERS.discover()


def launchers() -> list[Launcher]:
    """Every registered launcher, in the order the help shows them (`rank`, then name)."""
    return list(LAUNCHERS)


def launcher_names() -> tuple[str, ...]:
    return tuple(LAUNCHERS.known())


def launcher_for(name: str) -> Launcher:
    """The launcher of engine `name`; an unknown name is a user error that lists the known ones."""
    return LAUNCHERS.get(name, "unknown engine {name!r} to start; known: {known}")
