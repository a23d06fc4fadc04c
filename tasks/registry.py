"""The one registry of task families: `@task_family("niah", version="2")` registers a family by name with
its generator version. A family's version is part of each of its recipes (and so of its sample ids): a
change to what one family builds bumps that family's version alone, and every other family's ids, prompts
and histories stay as they are."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ctxprobe.tasks.common_params import with_common_params
from ctxprobe.tasks.errors import UserError, first_problem

if TYPE_CHECKING:  # the recipe (tasks.sample) reads its family's version from here at run time
    from ctxprobe.tasks.sample import Expected, Mode


@dataclass(frozen=True)
class NeedleDraft:
    """A piece of text to insert into the haystack at a depth (percent of the haystack).
    `unit` is False for a sentence the haystack wraps in its own style (" sentence" in prose,
    "\\n# sentence" in code); True for text that is already a unit beginning with its separator."""

    role: str
    text: str
    answer: str
    depth: float
    unit: bool = False


@dataclass(frozen=True)
class Draft:
    """What a family writes for one sample; the builder turns it into an exact-length prompt.
    Prompt = head + haystack (with needles) + tail; `tail` holds the question and the answer prefix."""

    head: str
    tail: str
    question: str
    answer_prefix: str
    needles: tuple[NeedleDraft, ...]
    expected: Expected
    max_tokens: int
    # Strings that must occur in the prompt only where the needles, head and tail put them.
    unique: tuple[str, ...] = field(default=())
    # Tokens of the nominal length kept for the answer (RULER's length convention counts 128).
    reserve_tokens: int = 0
    # What stands between the head and the first unit or needle in place of that piece's own separator
    # (RULER's `\n`, whatever the haystack); None keeps the piece's separator.
    context_opening: str | None = None
    # Where the document starts in `head`, for a family whose head holds it (aggregate, qa); None: after the
    # head (the haystack). A question placed at the start goes there.
    document_start: int | None = None
    # Figures the family measures on what it wrote, recorded on the sample (the latent family's lexical overlap).
    measures: dict[str, float] = field(default_factory=dict)
    # Chat mode's messages, for a family whose prompt is a conversation (mrcr); empty: one user message holding
    # head + haystack + tail. The text (head + tail) is then the conversation's transcript, for its hash.
    messages: tuple[dict[str, str], ...] = ()
    # The haystack's selected units in a seeded random order (Context Rot's shuffled haystack) instead of
    # the text's own: the same units, so the same length, only their order differs.
    shuffle_haystack: bool = False


# Parameters that change how a task is laid out, not what it asks: the needles and values are drawn
# without them, so one cell under two layouts has identical needles (template sensitivity; the latent
# family's `cue`, whose literal control keeps the latent sample's character, association and depth; niah's
# `haystack_order`, whose shuffled haystack holds the coherent one's needles).
LAYOUT_PARAMS = frozenset({"template", "length_convention", "question_position", "cue", "haystack_order"})


# The version a family starts at when it does not declare one: the version every family built before
# versions were per family, so their ids stayed as they were.
BASE_VERSION = "2"


class TaskFamily(Protocol):
    name: ClassVar[str]
    version: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft: ...


F = TypeVar("F", bound=type)
_FAMILIES: dict[str, type] = {}


def task_family(name: str, version: str = BASE_VERSION) -> Callable[[F], F]:
    """Register a family under `name`. `version` is its generator version: bump it whenever what the
    family builds changes (the golden-prompt test pins each family's prompts under its version). The
    family's `Params` gain the parameters every family accepts (`tasks.common_params`)."""

    def register(cls: F) -> F:
        cls.Params = with_common_params(cls.Params)  # type: ignore[attr-defined]
        cls.name = name  # type: ignore[attr-defined]
        cls.version = version  # type: ignore[attr-defined]
        _FAMILIES[name] = cls
        return cls

    return register


def known_families() -> list[str]:
    _load_builtin()
    return sorted(_FAMILIES)


def get_family(name: str) -> TaskFamily:
    _load_builtin()
    if name not in _FAMILIES:
        raise UserError(f"unknown task family {name!r}; known: {', '.join(sorted(_FAMILIES))}")
    return _FAMILIES[name]()  # type: ignore[no-any-return]


def family_version(name: str) -> str:
    """The generator version of family `name`; `BASE_VERSION` for a name no family registered (records
    of imported tasks carry their own version, so this default only fills in a recipe that gave none)."""
    _load_builtin()
    family = _FAMILIES.get(name)
    return str(getattr(family, "version", BASE_VERSION)) if family is not None else BASE_VERSION


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


def _load_builtin() -> None:
    # Importing the family modules registers them.
    import ctxprobe.tasks.families  # noqa: F401
