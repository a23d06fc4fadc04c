"""What every launcher says about the engine it starts, and the open registry that finds one by name.

A launcher is an engine ctxprobe starts for a run when no `--endpoint` is given (`--engine NAME`). It owns
everything about that engine: its settings model (each field a flag of `ctxprobe run` and `limit` and a run
option by its name; a run started with it holds them as one part, `RunOptions.endpoint.launcher`, and the
manifest records them as given), the title of its argument group, the mode a run takes
when nothing else says, the checks of its input before anything starts, how it sizes and starts the engine,
and the endpoint it hands the run (`Launched`: client config, engine facts, token counter). So adding one
is one module: in runners/launchers/ (imported by the package), or in another package that names it under
the `ctxprobe.launchers` entry point group. Nothing in evals/ names an engine.

Engine adapters (runners/engines/) are the other registry: how ctxprobe talks to a server of each kind,
whoever started it. A launcher starts a server; the adapters recognise it once it answers."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from ctxprobe.runners.settings import ClientSettings
from ctxprobe.tasks.plugins import Registry
from ctxprobe.tasks.sample import Mode

if TYPE_CHECKING:  # the client, the counters and the suite load when an engine starts, not with the flags
    from ctxprobe.runners.served import Launched
    from ctxprobe.tasks.suite import Suite

DEFAULT_LAUNCHER = "llama.cpp"  # what `--engine` is when not given: the embedded engine


@dataclass(frozen=True)
class Launch:
    """What a run asks a launcher to serve: the user's client settings, the launcher's own settings (its
    `settings` model, as given), the run's token counter and concurrency as given (None: the engine's own),
    the run's resolved mode, and the suite it will send (an engine may be sized to it)."""

    client: ClientSettings
    settings: BaseModel
    token_counter: str | None
    concurrency: int | None
    mode: Mode
    suite: Suite


class Launcher(ABC):
    """One engine ctxprobe starts. Subclasses set the class attributes and `serve`; `@launcher` registers them."""

    name: ClassVar[str]  # the `--engine` value, recorded in the manifest's options
    summary: ClassVar[str]  # a few words for `--engine`'s help: "embedded, GGUF"
    group: ClassVar[str]  # the title of its argument group in `run --help` and `limit --help`
    settings: ClassVar[type[BaseModel]]  # its options: field names must be its own (no other launcher's, no run's)
    metavars: ClassVar[Mapping[str, str]] = {}  # a flag's metavar, by field name ("DIR")
    default_mode: ClassVar[Mode] = "chat"  # the run's mode when neither the run nor its suite says
    rank: ClassVar[int] = 100  # where its group and name come in the help (then by name)

    def check(self, settings: BaseModel) -> None:
        """Refuse bad input (`UserError`) before anything is made: a run folder, a server."""

    def limit_settings(self, settings: BaseModel, max_length: int | None) -> BaseModel:
        """The settings `ctxprobe limit` starts the engine with (`max_length`: its --max-length): a context of
        ctxprobe's own choosing would be measured as the endpoint's limit. Default: as given."""
        return settings

    def start_context(self, settings: BaseModel) -> int | None:
        """The context length the engine is started with, where it is known before it starts."""
        return None

    def slots(self, settings: BaseModel) -> int | None:
        """The requests the engine serves at once, where known before it starts (the default requests in
        flight follow them, `runners.response.in_flight`); None: known once it answers."""
        return None

    @abstractmethod
    def serve(self, launch: Launch) -> contextlib.AbstractContextManager[Launched]:
        """Start the engine, yield what the run talks to, stop it on the way out (errors, Ctrl-C, SIGTERM)."""


ENTRY_POINT_GROUP = "ctxprobe.launchers"  # [project.entry-points."ctxprobe.launchers"] name = "module"
# Listed in the order the help shows them (`rank`, then name); plugins are imported on first use.
LAUNCHERS: Registry[Launcher] = Registry(
    "launcher", group=ENTRY_POINT_GROUP, order=lambda name, found: (found.rank, name)
)


def launcher(cls: type[Launcher]) -> type[Launcher]:
    """Class decorator: one launcher instance per engine name; a settings field another launcher already
    declares is refused (the two would share one flag and one option name of `RunOptions`)."""
    for other in LAUNCHERS.so_far().values():
        if other.name == cls.name:
            continue
        shared = set(cls.settings.model_fields) & set(other.settings.model_fields)
        if shared:
            raise ValueError(
                f"launcher {cls.name!r} declares {', '.join(sorted(shared))}, already launcher {other.name!r}'s"
            )
    LAUNCHERS.add(cls.name, cls())
    return cls


def unregister(name: str) -> None:
    """Forget launcher `name` (one registered for a while, e.g. by a test)."""
    LAUNCHERS.remove(name)


def registered() -> dict[str, Launcher]:
    return LAUNCHERS.items()
