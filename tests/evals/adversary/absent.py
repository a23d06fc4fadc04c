"""The absent questions' corpus: replies to a question about a key the prompt holds nowhere, each with the
verdict it must get (`tasks/answers/absence.py`), on every value kind that takes `absent`, both modes.

- `abstains`: an honest abstention in several phrasings: credited;
- `invents`: a value of the asked kind, however the reply frames it (beside "not in the text", after "I don't
  know", another needle's value quoted beside a refusal, in words, in fullwidth digits): wrong, `hallucinated`;
- `neither`: no value and no abstention (a hum, doubt, the question repeated): wrong, no attribution."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.families.vocab import VALUE_WORDS
from ctxprobe.tasks.sample import Recipe, Sample
from tests.evals.adversary.disguises import fullwidth, in_words

Reply = Callable[[Sample], str]


@dataclass(frozen=True)
class AbsentKind:
    label: str
    family: str
    params: dict[str, object]
    mode: str

    def sample(self) -> Sample:
        return build_sample(
            Recipe(
                family=self.family,
                params={**self.params, "absent": True},
                context_tokens=700,
                depth=50,
                seed=3,
                mode=self.mode,
            )
        )  # type: ignore[arg-type]


KINDS = [
    AbsentKind(f"{family} {label}, {mode}", family, params, mode)
    for mode in ("completions", "chat")
    for family, label, params in (
        ("niah", "multikey number", {"variant": "multikey", "distractors": 3}),
        ("niah", "single word", {"variant": "single", "value_kind": "word"}),
        ("niah", "single uuid", {"variant": "single", "value_kind": "uuid"}),
        ("niah", "multiquery", {"variant": "multiquery", "queries": 2}),
        ("recall", "hex", {"kind": "hex", "distractors": 2}),
    )
]


def key(s: Sample) -> str:
    """The key the question asks for (the first, where it asks several): an adjective-noun word."""
    return next(w.strip("?.,") for w in s.question.split() if w.count("-") == 1)


def invented(s: Sample) -> str:
    """A value of the asked kind that no needle of the prompt holds."""
    held = {n.answer for n in s.needles}
    value = s.needles[0].answer
    if value.isdigit():
        return next(v for v in ("1234567", "7654321") if v not in held)
    if value in VALUE_WORDS:
        return next(w for w in VALUE_WORDS if w not in held and w not in s.prompt)
    if len(value) == 36:
        return str(uuid.UUID(int=0x1234567, version=4))
    return value[::-1]


def other(s: Sample) -> str:
    """Another needle's value: one the prompt does hold."""
    return s.needles[0].answer


@dataclass(frozen=True)
class Case:
    kind: str
    sample: Sample
    label: str
    text: str
    correct: bool
    attribution: str | None


REPLIES: list[tuple[str, str, Reply]] = [
    (
        "abstains",
        "the text does not mention it",
        lambda s: f"The text does not mention a special magic number for {key(s)}.",
    ),
    ("abstains", "there is no X in the text", lambda s: f"There is no special magic number for {key(s)} in the text."),
    ("abstains", "not found", lambda s: "Not found."),
    ("abstains", "I don't know", lambda s: "I don't know."),
    (
        "abstains",
        "the context does not contain it",
        lambda s: "The provided context does not contain that information.",
    ),
    ("abstains", "cannot find it", lambda s: f"I cannot find {key(s)} anywhere in the document."),
    ("abstains", "none", lambda s: "None."),
    ("abstains", "abstains and denies a value", lambda s: f"Not mentioned; it is not {invented(s)}."),
    ("invents", "the value alone", lambda s: invented(s)),
    ("invents", "a value plus 'not in the text'", lambda s: f"{invented(s)} (not in the text)"),
    (
        "invents",
        "a value, though not mentioned",
        lambda s: f"It is {invented(s)}, though it is not mentioned in the text.",
    ),
    ("invents", "not in the text: a value", lambda s: f"Not in the text: {invented(s)}"),
    (
        "invents",
        "a refusal that quotes another needle's value",
        lambda s: f"There is no special magic number for {key(s)}; the text only gives {other(s)} for another key.",
    ),
    ("invents", "I don't know, maybe a value", lambda s: f"I don't know, maybe {invented(s)}"),
    (
        "invents",
        "cannot find it, but it could be a value",
        lambda s: f"I cannot find it, but it could be {invented(s)}.",
    ),
    ("invents", "a value in words", lambda s: f"It is {in_words(invented(s))}." if invented(s).isdigit() else ""),
    ("invents", "a value in fullwidth characters", lambda s: f"It is {fullwidth(invented(s))}."),
    (
        "invents",
        "abstains, then a guess in a second sentence (chat: the whole reply)",
        lambda s: f"The text does not say. My best guess is {invented(s)}." if s.recipe.mode == "chat" else "",
    ),
    ("neither", "a hum", lambda s: "Hmm."),
    ("neither", "doubt alone", lambda s: "I'm not sure."),
    ("neither", "the question repeated", lambda s: s.question),
]


def cases() -> list[Case]:
    """Every (kind, reply) tried."""
    out = []
    for kind in KINDS:
        sample = kind.sample()
        for family, label, reply in REPLIES:
            if text := reply(sample):
                out.append(
                    Case(
                        kind.label,
                        sample,
                        label,
                        text,
                        family == "abstains",
                        "hallucinated" if family == "invents" else None,
                    )
                )
    return out
