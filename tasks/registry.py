"""The one registry of task families: `@task_family("niah", version="2")` registers a family by name with
its generator version. A family's version is part of each of its recipes (and so of its sample ids): a
change to what one family builds bumps that family's version alone, and every other family's ids, prompts
and histories stay as they are. Families are found, not listed (tasks/family_index.py): the built-in
package's modules, entry points, `--include` paths. What a family implements: tasks/family.py."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ctxprobe.tasks import family_index
from ctxprobe.tasks.common_params import with_common_params
from ctxprobe.tasks.draft import Draft, NeedleDraft
from ctxprobe.tasks.errors import UserError, first_problem
from ctxprobe.tasks.family_index import BASE_VERSION, family_version
from ctxprobe.tasks.identity import LAYOUT_PARAMS
from ctxprobe.tasks.sample import Mode

__all__ = [
    "BASE_VERSION",
    "LAYOUT_PARAMS",
    "Draft",
    "NeedleDraft",
    "TaskFamily",
    "family_version",
    "get_family",
    "known_families",
    "task_family",
    "validate_params",
]


class TaskFamily(Protocol):
    name: ClassVar[str]
    version: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft: ...


F = TypeVar("F", bound=type)


def task_family(name: str, version: str = BASE_VERSION) -> Callable[[F], F]:
    """Register a family under `name`. `version` is its generator version: bump it whenever what the
    family builds changes (the golden-prompt test pins each family's prompts under its version). The
    family's `Params` gain the parameters every family accepts (`tasks.common_params`)."""

    def register(cls: F) -> F:
        family: Any = cls  # the class gains what a TaskFamily declares: its parameters, name and version
        family.Params = with_common_params(family.Params)
        family.name = name
        family.version = version
        family_index.add(name, cls)
        return cls

    return register


def known_families() -> list[str]:
    return family_index.family_names()


def get_family(name: str) -> TaskFamily:
    cls = family_index.family_class(name)
    if cls is None:
        raise UserError(f"unknown task family {name!r}; known: {', '.join(known_families())}")
    return cls()


def validate_params(family: TaskFamily, params: dict[str, object]) -> BaseModel:
    """Validate a family's parameters; an unknown or invalid one is a one-line UserError."""
    try:
        return family.Params.model_validate(params)
    except ValidationError as exc:
        where, msg, kind = first_problem(exc)
        where = where or "params"
        if kind == "extra_forbidden":
            known = ", ".join(family.Params.model_fields)
            raise UserError(f"unknown parameter {where!r} for task family {family.name!r}; known: {known}") from None
        raise UserError(f"invalid parameter {where!r} for task family {family.name!r}: {msg}") from None
