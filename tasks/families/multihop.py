"""`multihop`: answers reached only by following a chain of facts spread through the haystack.

- `vartrack` (RULER variable tracking): `VAR ABCDE = 12345`, then `hops` assignments `VAR FGHIJ = VAR ABCDE`, ...;
  every variable of the chain (hops + 1 names) is required.
- `keychain`: `hops` sentences "The key K1 opens the box holding key K2." ... "... holding the value V.";
  given K1, the answer is V; the chain K2, ..., V scores partial progress.
- `kinship`: `hops` facts "X is Y's parent." over hops + 1 generations, in shuffled order; given the
  youngest, the answer is the eldest ancestor; the chain parent, grandparent, ..., eldest scores progress.
`chains` adds distractor chains of the same shape with their own names and values. The asked chain's first
fact is role "target", its other facts "hop", distractor chains' facts "distractor". Placement `spread` puts
the asked chain's facts evenly from the recipe's depth to 100 and a distractor chain's at random depths in
chain order; `random` keeps the asked chain's first fact at the depth and draws every other depth. Kinship
facts take the depths in a shuffled order that is neither the chain order nor its reverse.

`template: ruler` (vartrack only) writes RULER's variable tracking as lm-eval's `ruler_vt` does, one-shot
example included (`ruler_vartrack`); with `hops: 4, chains: 0` and the `noise:ruler` haystack it is `ruler_vt`.
`length_convention: ruler` counts RULER's 30 generated tokens in the nominal length."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.families import chinese, ruler_vartrack
from ctxprobe.tasks.families.framing import Lang, LengthConvention, Template, english_only, frame, lang_field
from ctxprobe.tasks.families.vocab import GIVEN_NAMES, chain_taken, make_key, make_value, make_var_name, spread_depths
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode


class MultihopParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["vartrack", "keychain", "kinship"] = Field(
        "vartrack", description="vartrack (variable assignments), keychain (key -> key -> value), kinship (parents)"
    )
    hops: int = Field(4, ge=1, le=16, description="links in the asked chain")
    chains: int = Field(1, ge=0, le=8, description="distractor chains of the same shape")
    placement: Literal["spread", "random"] = Field("spread", description="where a chain's facts go")
    template: Template = Field(
        "ctxprobe", description="prompt layout: ctxprobe's, or RULER's exact strings (vartrack only)"
    )
    length_convention: LengthConvention = Field(
        "prompt", description="prompt: the length is the prompt's; ruler: it includes RULER's 30 generated tokens"
    )
    lang: Lang = lang_field()

    @model_validator(mode="after")
    def _enough_names(self) -> MultihopParams:
        if self.kind == "kinship" and kinship_names(self) > len(GIVEN_NAMES):
            raise ValueError(f"kinship needs (chains + 1) * (hops + 1) <= {len(GIVEN_NAMES)} distinct names")
        if self.template == "ruler" and self.kind != "vartrack":
            raise ValueError(
                f"template 'ruler' is RULER's variable tracking: kind {self.kind!r} has no RULER "
                "layout (use kind 'vartrack')"
            )
        if self.template == "ruler":
            english_only(self.lang, "template 'ruler' (RULER's strings)")
        return self


@task_family("multihop", version="2")
class Multihop:
    Params = MultihopParams

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = MultihopParams.model_validate(params)
        if p.kind == "vartrack":
            return _vartrack(p, depth, mode, rng)
        if p.kind == "keychain":
            return _keychain(p, depth, mode, rng)
        return _kinship(p, depth, mode, rng)

    def nested_capacity(self, params: BaseModel) -> int | None:
        """The cells a nested chain always holds: kinship's cells take names apart from a list of
        `len(GIVEN_NAMES)`; the other kinds draw keys and values from pools far larger than a grid."""
        p = MultihopParams.model_validate(params)
        return len(GIVEN_NAMES) // kinship_names(p) if p.kind == "kinship" else None


def _place(
    facts: list[tuple[str, str]],
    asked: bool,
    depth: float,
    p: MultihopParams,
    rng: random.Random,
    shuffle: bool = False,
) -> list[NeedleDraft]:
    """Needles for one chain's facts (text, the name each introduces); `shuffle` mixes their order in the text."""
    if asked:
        depths = spread_depths(depth, len(facts), rng, p.placement)
    else:  # in chain order at random depths, so that the chains' ends do not all pile up at 100
        depths = [round(rng.uniform(0.0, 100.0), 3) for _ in facts]
        if p.placement == "spread":
            depths.sort()
    needles = [
        NeedleDraft(role=("target" if i == 0 else "hop") if asked else "distractor", text=text, answer=answer, depth=d)
        for i, ((text, answer), d) in enumerate(zip(facts, depths))
    ]
    if not shuffle or len(needles) < 2:
        return needles
    # The depths, in text order, go to the facts in an order that is neither the chain order nor its reverse;
    # the needles are listed in text order, so facts that land on one unit boundary stay shuffled too.
    order = list(range(len(needles)))
    straight = [order[:], order[::-1] if len(order) > 2 else order[:]]
    while order in straight:
        rng.shuffle(order)
    return [replace(needles[i], depth=d) for i, d in zip(order, sorted(depths))]


def _vartrack(p: MultihopParams, depth: float, mode: Mode, rng: random.Random) -> Draft:
    names: set[str] = set()
    values: set[str] = set()
    needles: list[NeedleDraft] = []
    asked_value, asked_names = "", []
    for c in range(p.chains + 1):
        value = make_value(ruler_vartrack.VALUE_KIND, rng, values)
        chain = [make_var_name(rng, names, 5) for _ in range(p.hops + 1)]
        texts = ruler_vartrack.statements(chain, value)
        if p.template == "ctxprobe":
            texts = [text + ("。" if p.lang == "zh" else ".") for text in texts]
        needles += _place(list(zip(texts, chain)), c == 0, depth, p, rng)
        if c == 0:
            asked_value, asked_names = value, chain
    expected = Expected(kind="values", answers=asked_names)
    max_tokens = 8 + 6 * len(asked_names)
    if p.template == "ruler":  # the example is drawn after the task's needles, so both layouts share them
        shot = ruler_vartrack.example(rng, names, values)
        return frame(
            shot.text + ruler_vartrack.HEAD + "\n",
            ruler_vartrack.question(asked_value),
            ruler_vartrack.answer_prefix(len(asked_names), asked_value),
            mode,
            tuple(needles),
            expected,
            max_tokens,
            unique=tuple(sorted(names | values)),
            template="ruler",
            length_convention=p.length_convention,
            ruler_gap="\n\n",
            ruler_generation_tokens=ruler_vartrack.GENERATION_TOKENS,
        )
    if p.lang == "zh":
        head = chinese.VARTRACK_HEAD
        question, prefix = chinese.vartrack_frame(asked_value, len(asked_names))
    else:
        head = ruler_vartrack.HEAD
        question = f"Find all variables that are assigned the value {asked_value} in the text above."
        prefix = (
            f"Answer: According to the chain(s) of variable assignment in the text above, "
            f"{len(asked_names)} variables are assigned the value {asked_value}, they are:"
        )
    return frame(
        head,
        question,
        prefix,
        mode,
        tuple(needles),
        expected,
        max_tokens,
        unique=tuple(sorted(names | values)),
        length_convention=p.length_convention,
        ruler_generation_tokens=ruler_vartrack.GENERATION_TOKENS,
        lang=p.lang,
    )


def _keychain(p: MultihopParams, depth: float, mode: Mode, rng: random.Random) -> Draft:
    keys: set[str] = set()
    values: set[str] = set()
    needles: list[NeedleDraft] = []
    first, asked_chain = "", []
    for c in range(p.chains + 1):
        chain = [make_key(rng, keys) for _ in range(p.hops)]
        value = make_value("number", rng, values)
        if p.lang == "zh":
            facts = [(chinese.keychain_fact(chain[i], chain[i + 1]), chain[i + 1]) for i in range(len(chain) - 1)]
            facts.append((chinese.keychain_last(chain[-1], value), value))
        else:
            facts = [
                (f"The key {chain[i]} opens the box holding key {chain[i + 1]}.", chain[i + 1])
                for i in range(len(chain) - 1)
            ]
            facts.append((f"The key {chain[-1]} opens the box holding the value {value}.", value))
        needles += _place(facts, c == 0, depth, p, rng)
        if c == 0:
            first, asked_chain = chain[0], [*chain[1:], value]
    head = (
        "Some keys and the boxes they open are described within the following text. "
        "Make sure to memorize them. I will quiz you about them afterwards."
    )
    question = f"Starting from key {first} and following the keys, what value do you reach in the provided text?"
    prefix = f"Starting from key {first} and following the keys, the value reached is"
    if p.lang == "zh":
        head, question, prefix = chinese.keychain_frame(first)
    expected = Expected(kind="chain", answers=[asked_chain[-1]], chain=asked_chain)
    return frame(
        head,
        question,
        prefix,
        mode,
        tuple(needles),
        expected,
        max_tokens=24,
        unique=tuple(sorted(keys | values)),
        lang=p.lang,
    )


def kinship_names(p: MultihopParams) -> int:
    """The names one kinship draft takes: its chains' generations."""
    return (p.chains + 1) * (p.hops + 1)


def _kinship(p: MultihopParams, depth: float, mode: Mode, rng: random.Random) -> Draft:
    # In a nested chain a cell draws from the names no earlier cell took, so a chain always holds
    # `nested_capacity` cells; alone (nothing taken) the list is the whole name list, drawn as ever.
    free = [name for name in GIVEN_NAMES if name not in chain_taken()]
    pool = rng.sample(free, kinship_names(p))
    needles: list[NeedleDraft] = []
    youngest, ancestors = "", []
    for c in range(p.chains + 1):
        family = pool[c * (p.hops + 1) : (c + 1) * (p.hops + 1)]  # youngest first, eldest last
        facts = [
            (
                chinese.kinship_fact(family[i + 1], family[i])
                if p.lang == "zh"
                else f"{family[i + 1]} is {family[i]}'s parent.",
                family[i + 1],
            )
            for i in range(p.hops)
        ]
        needles += _place(facts, c == 0, depth, p, rng, shuffle=True)
        if c == 0:
            youngest, ancestors = family[0], family[1:]
    head = (
        "Some family relations are described within the following text. "
        "Make sure to memorize them. I will quiz you about them afterwards."
    )
    question = f"Who is the eldest ancestor of {youngest} mentioned in the text?"
    prefix = f"The eldest ancestor of {youngest} mentioned in the text is"
    if p.lang == "zh":
        head, question, prefix = chinese.kinship_frame(youngest)
    expected = Expected(kind="chain", answers=[ancestors[-1]], chain=ancestors)
    return frame(
        head, question, prefix, mode, tuple(needles), expected, max_tokens=16, unique=tuple(sorted(pool)), lang=p.lang
    )
