"""`latent`: NoLiMa-style needles that the question reaches only through an association, never by a word.

A needle states a fact about a character through an entity ("Actually, Yuki lives next to the Semperoper.")
and the question names an entity associated with it that the needle never writes ("Which character has
been to Dresden?"). The associations and names are the shipped table (`latent_table.py`).

- `hops: 1`: the question names the needle entity's first hop (the city, the author, the painter, the
  dish's country, the element's symbol); `hops: 2` its second (the country of that city, author or
  painter), reached through the first, which neither needle nor question writes.
- `direction: default` writes the character before the entity; `inverted` the entity first (NoLiMa's
  inverted templates).
- `cue: literal` is the control: the same needle with the asked entity written in it ("... the Semperoper
  (Dresden)."). `cue` is a layout parameter: a latent and a literal sample of one cell have the same
  character, association, haystack window and depth, so latent minus literal is measured at the same place
  (the same haystack before the needle, or where the control's few more tokens move the depth's nearest
  sentence boundary, one sentence off).
- `kind` keeps to one kind of association (`any`: all of them that have the asked hop).

Each sample records `lexical_overlap`, the question's ROUGE-1 precision against the needle over content
words; a latent sample above `MAX_LATENT_OVERLAP` is refused. The answer is the character's name, and no
other name of the name list in its place (scored as `name`, at the end of this module)."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.answers.kinds import answer_kind
from ctxprobe.tasks.answers.reading import CandidateKind, read
from ctxprobe.tasks.answers.region import AnswerRegion
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.framing import frame
from ctxprobe.tasks.families.latent_table import Association, associations, character_names, lexical_overlap
from ctxprobe.tasks.families.vocab import chain_taken
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode, Sample

# A latent question may share no content word with its needle: NoLiMa's point is a cue without a word.
MAX_LATENT_OVERLAP = 0.0
HEAD = (
    "You will answer a question based on the following text. Use the information provided in the text to "
    "answer: your answer should be based on either explicitly stated facts or strong, logical inferences."
)
PREFIX = "Answer: the character's name is"
ANSWER_TOKENS = 24  # a name, or the sentence a base model writes around one ("the one who has been to Dresden, Yuki")


@dataclass(frozen=True)
class Templates:
    """A kind's needle sentences (by direction) and questions (by hops)."""

    default: str
    inverted: str
    questions: tuple[str, ...]  # hops 1, hops 2 (empty: the kind has no second hop)


TEMPLATES: dict[str, Templates] = {
    "landmark": Templates(
        "Actually, {name} lives next to {entity}.",
        "Actually, {entity} is next to where {name} lives.",
        ("Which character has been to {asked}?", "Which character has been to {asked}?"),
    ),
    "work": Templates(
        "{name} keeps a worn copy of {entity} on the nightstand.",
        "A worn copy of {entity} sits on the nightstand of {name}.",
        (
            "Which character owns a book written by {asked}?",
            "Which character owns a book written by an author from {asked}?",
        ),
    ),
    "painting": Templates(
        "{name} once stood for an hour in front of {entity}.",
        "In front of {entity}, {name} once stood for an hour.",
        (
            "Which character has seen a painting by {asked}?",
            "Which character has seen a painting by an artist from {asked}?",
        ),
    ),
    "dish": Templates(
        "{name} cooked {entity} for the whole family last night.",
        "Last night, {entity} was cooked for the whole family by {name}.",
        ("Which character has eaten a dish from {asked}?", ""),
    ),
    "element": Templates(
        "{name} keeps a sealed jar of {entity} in the garage.",
        "A sealed jar of {entity} is kept in the garage by {name}.",
        ("Which character has a sample of the element with the symbol {asked}?", ""),
    ),
}


class LatentParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hops: Literal[1, 2] = Field(
        1, description="1: the question names the needle entity's association; 2: an association of that association"
    )
    direction: Literal["default", "inverted"] = Field(
        "default", description="default: the character before the entity in the needle; inverted: the entity first"
    )
    cue: Literal["latent", "literal"] = Field(
        "latent",
        description="latent: the question shares no word with the "
        "needle; literal: the control, the asked entity written in the needle",
    )
    kind: Literal["any", "landmark", "work", "painting", "dish", "element"] = Field(
        "any", description="the associations drawn from: one kind, or any that has the asked hop"
    )

    @model_validator(mode="after")
    def _kind_has_hops(self) -> LatentParams:
        if self.hops == 2 and self.kind in ("dish", "element"):
            raise ValueError(f"kind {self.kind!r} has no second hop: use hops 1, or kind landmark, work or painting")
        return self


def eligible(p: LatentParams) -> tuple[Association, ...]:
    """The associations a sample of these parameters draws from."""
    return tuple(a for a in associations() if (p.kind in ("any", a.kind)) and a.asked(p.hops))


def latent_sentences(row: Association, name: str, hops: int, direction: str, cue: str) -> tuple[str, str]:
    """The needle and the question for one association and character."""
    templates = TEMPLATES[row.kind]
    asked = row.asked(hops)
    entity = row.entity if cue == "latent" else f"{row.entity} ({asked})"
    needle = (templates.default if direction == "default" else templates.inverted).format(name=name, entity=entity)
    return needle, templates.questions[hops - 1].format(asked=asked)


def _held(row: Association) -> set[str]:
    """What a row's needle and question hold that another cell of a chain may not."""
    return {t for t in (row.entity, row.first, row.second) if t}


@functools.cache
def groups(p: LatentParams) -> tuple[int, ...]:
    """Each eligible row's group: rows that share an entity, a first or a second hop, directly or through
    others, are one group. A nested chain takes one row of a group at most, so each cell costs one group
    whatever was drawn before it: a chain holds as many cells as there are groups (and names), for any seed."""
    rows = eligible(p)
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, row in enumerate(rows):
        for text in _held(row):
            parent[root(i)] = root(owner.setdefault(text, i))
    return tuple(root(i) for i in range(len(rows)))


@task_family("latent", version="1")
class Latent:
    Params = LatentParams

    def nested_capacity(self, params: BaseModel) -> int:
        """The cells a nested chain always holds: one group of associations and one name each."""
        return min(len(set(groups(LatentParams.model_validate(params)))), len(character_names()))

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = LatentParams.model_validate(params)
        rows, names = eligible(p), character_names()
        taken = chain_taken()
        if taken:  # a nested chain's later cell: rows of the groups and names no earlier cell took
            group = groups(p)
            used = {group[i] for i, row in enumerate(rows) if _held(row) & taken}
            rows = tuple(row for i, row in enumerate(rows) if group[i] not in used)
            names = tuple(name for name in names if name not in taken)
            if not rows or not names:
                raise UserError(
                    f"layout nested: latent ({p.kind}, hops {p.hops}) has no association or name left "
                    f"for another cell of the chain (it holds {self.nested_capacity(p)})"
                )
        row = rows[rng.randrange(len(rows))]
        name = names[rng.randrange(len(names))]
        needle, question = latent_sentences(row, name, p.hops, p.direction, p.cue)
        overlap = lexical_overlap(question, needle)
        if p.cue == "latent" and overlap > MAX_LATENT_OVERLAP:
            raise UserError(
                f"latent needle {needle!r} shares {overlap:.2f} of the question's content words "
                f"(more than {MAX_LATENT_OVERLAP}): fix the association table"
            )
        unique = tuple(t for t in (name, row.entity, row.first, row.second) if t)
        draft = frame(
            HEAD,
            question,
            PREFIX,
            mode,
            (NeedleDraft(role="target", text=needle, answer=name, depth=depth),),
            Expected(kind="name", answers=[name]),
            max_tokens=ANSWER_TOKENS,
            unique=unique,
        )
        return replace(draft, measures={"lexical_overlap": round(overlap, 4)})


@answer_kind("name")
def score_name(region: AnswerRegion, sample: Sample) -> Score:
    """The character's name, and no other name in its place: correct iff the answer slot asserts the expected
    name and no other listed one; partial is the same as correct.

    The candidates (`tasks/answers/reading.py`) are the names of the family's name list, however written (case,
    letter spacing, look-alike letters): a slot that names the character and another listed name as well ("Yuki
    or Megan", or in chat a later paragraph naming Megan) offers a second answer and is wrong, as is one that
    names only another character. A name the slot does not assert ("not Yuki", "Yuki (just kidding)";
    `tasks/answers/polarity.py`) is neither credited nor a rival; the name only spelled out letter by letter is
    a rival of itself. An answer that names no listed character extracts its line as said; it is cut off (an
    error) only when the budget ended it before that line did (evals/scoring/truncation.py)."""
    expected = sample.expected.answers[0]
    wanted = expected.casefold()
    kind = CandidateKind("closed", vocabulary=frozenset(n.casefold() for n in character_names()) | {wanted})
    reading = read(region.text, region.unit, kind, region.frame, [wanted])
    found, others = reading.offers([wanted])
    correct = bool(found) and not others
    # No listed name: the answer line as said ("Dante Alighieri.", the question's own words, names nobody)
    extracted = reading.shown([wanted], [expected]) or list(region.lines[:1])
    return Score(extracted=extracted, correct=correct, partial=float(correct))
