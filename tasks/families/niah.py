"""`niah`: needle retrieval with RULER's variants.

- `single`: one needle (key -> value); asked for its value.
- `multikey`: the target plus `distractors` needles of the same form with other keys.
- `multivalue`: one key with `values` values; all are required.
- `multiquery`: `queries` keys, each with a value; all are asked at once.
Value kinds: `number` (7 digits), `word`, `uuid`; keys are adjective-noun words or uuids. The target
needle goes at the recipe's depth; the others are spread or placed at random (`placement`).
`absent: true` asks, in the same words, for a key the prompt holds nowhere (`tasks/absent.py`): every
variant fits, since each asks for keys that map to values of one kind.

`template: ruler` writes RULER's strings as lm-eval's `ruler` tasks do (its instruction, needle, question,
answer prefix and separators), for numbers comparable with published RULER tables; with the `noise:ruler`
haystack, `variant: single` is RULER's `niah_single_1`; on the `needle` haystack (lines of distractor
needles) it is `niah_multikey_2`, and with uuid keys and values on `needle:uuid`, `niah_multikey_3`. `length_convention: ruler` counts 128 generated
tokens in the nominal length, as RULER does."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.absent import absent_field
from ctxprobe.tasks.families import chinese
from ctxprobe.tasks.families.framing import (
    Lang,
    LengthConvention,
    Template,
    english_only,
    frame,
    join_names,
    lang_field,
)
from ctxprobe.tasks.families.niah_similar import similar_distractors
from ctxprobe.tasks.families.vocab import make_key, make_value, spread_depths
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode

_NOUN = {"number": ("number", "numbers"), "word": ("word", "words"), "uuid": ("UUID", "UUIDs")}
_RULER_NOUN = {"number": ("number", "numbers"), "word": ("word", "words"), "uuid": ("uuid", "uuids")}
_TOKENS_PER_VALUE = {"number": 12, "word": 8, "uuid": 40}


class NiahParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    variant: Literal["single", "multikey", "multivalue", "multiquery"] = Field(
        "single",
        description="single, multikey (distractor keys), multivalue (all values of one key), multiquery (several keys)",
    )
    value_kind: Literal["number", "word", "uuid"] = Field("number", description="7-digit number, word or UUID")
    key_kind: Literal["word", "uuid"] = Field(
        "word", description="adjective-noun key, or a UUID (RULER's niah_multikey_3)"
    )
    distractors: int = Field(3, ge=1, le=64, description="multikey: needles with other keys")
    values: int = Field(4, ge=2, le=32, description="multivalue: values for the one key")
    queries: int = Field(4, ge=2, le=32, description="multiquery: keys asked at once")
    placement: Literal["random", "spread"] = Field("random", description="where needles other than the target go")
    template: Template = Field("ctxprobe", description="prompt layout: ctxprobe's, or RULER's exact strings")
    length_convention: LengthConvention = Field(
        "prompt", description="prompt: the length is the prompt's; ruler: it includes 128 generated tokens"
    )
    lang: Lang = lang_field()
    distractors_kind: Literal["other", "similar"] = Field(
        "other",
        description="multikey's distractors: needles with other keys; similar (single or multikey): "
        "`distractors` near copies of the target (a near key, a near key with a near value, the target key's twin)",
    )
    haystack_order: Literal["coherent", "shuffled"] = Field(
        "coherent", description="the haystack's sentences in their own order, or in a seeded random one"
    )
    absent: bool = absent_field()

    @model_validator(mode="after")
    def _ruler_is_english(self) -> NiahParams:
        if self.template == "ruler":
            english_only(self.lang, "template 'ruler' (RULER's strings)")
        if self.absent:
            english_only(self.lang, "absent (its abstentions are read in English)")
        if self.distractors_kind == "similar":
            english_only(self.lang, "distractors_kind 'similar'")
            if self.variant not in ("single", "multikey"):
                raise ValueError("distractors_kind 'similar' goes with variant single or multikey")
        return self


@task_family("niah", version="3")
class Niah:
    Params = NiahParams

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = NiahParams.model_validate(params)
        draft = self._draft(p, depth, mode, rng)
        return replace(draft, shuffle_haystack=True) if p.haystack_order == "shuffled" else draft

    def _draft(self, p: NiahParams, depth: float, mode: Mode, rng: random.Random) -> Draft:
        one, many = (_RULER_NOUN if p.template == "ruler" else _NOUN)[p.value_kind]
        keys: set[str] = set()
        values: set[str] = set()

        def new_key() -> str:
            return make_value("uuid", rng, keys) if p.key_kind == "uuid" else make_key(rng, keys)

        target = new_key()
        needles: list[NeedleDraft] = []

        def needle(role: str, key: str, d: float) -> str:
            value = make_value(p.value_kind, rng, values)
            sentence = (
                chinese.niah_needle(p.value_kind, key, value)
                if p.lang == "zh"
                else f"One of the special magic {many} for {key} is: {value}."
            )
            needles.append(NeedleDraft(role=role, text=sentence, answer=value, depth=d))
            return value

        if p.variant in ("single", "multikey"):
            answer = needle("target", target, depth)
            if p.distractors_kind == "similar":
                depths = spread_depths(depth, p.distractors + 1, rng, p.placement)[1:]
                needles += similar_distractors(target, answer, p.value_kind, many, depths, rng, keys, values)
            elif p.variant == "multikey":
                for d in spread_depths(depth, p.distractors + 1, rng, p.placement)[1:]:
                    needle("distractor", new_key(), d)
            asked = [target]
            expected = Expected(kind="value", answers=[answer])
        elif p.variant == "multivalue":
            answers = [needle("target", target, d) for d in spread_depths(depth, p.values, rng, p.placement)]
            asked = [target]
            expected = Expected(kind="values", answers=answers)
        else:
            asked = [target] + [new_key() for _ in range(p.queries - 1)]
            depths = spread_depths(depth, p.queries, rng, p.placement)
            answers = [needle("target", key, d) for key, d in zip(asked, depths)]
            expected = Expected(kind="values", answers=answers)

        plural = len(expected.answers) > 1
        noun = many if plural else one
        if p.template == "ruler":
            return self._ruler(p, asked, plural, mode, tuple(needles), expected, tuple(keys))
        if p.lang == "zh":
            head, question, prefix = chinese.niah_frame(p.value_kind, asked, plural)
            return frame(
                head,
                question,
                prefix,
                mode,
                tuple(needles),
                expected,
                max_tokens=_max_tokens(p, expected),
                unique=tuple(keys),
                length_convention=p.length_convention,
                lang=p.lang,
            )
        keys_text = join_names(asked)
        head = (
            f"Some special magic {many} are hidden within the following text. "
            f"Make sure to memorize them. I will quiz you about the {many} afterwards."
        )
        if plural:
            question = f"What are all the special magic {many} for {keys_text} mentioned in the provided text?"
            prefix = f"The special magic {noun} for {keys_text} mentioned in the provided text are"
        else:
            question = f"What is the special magic {one} for {keys_text} mentioned in the provided text?"
            prefix = f"The special magic {one} for {keys_text} mentioned in the provided text is"
        return frame(
            head,
            question,
            prefix,
            mode,
            tuple(needles),
            expected,
            max_tokens=_max_tokens(p, expected),
            unique=tuple(keys),
            length_convention=p.length_convention,
        )

    @staticmethod
    def _ruler(
        p: NiahParams,
        asked: list[str],
        plural: bool,
        mode: Mode,
        needles: tuple[NeedleDraft, ...],
        expected: Expected,
        keys: tuple[str, ...],
    ) -> Draft:
        """RULER's strings (lm-eval `tasks/ruler/niah_utils.py` TEMPLATE and `prepare_niah.py`): singular
        wording when one value is asked, `a, b, and c` for several keys."""
        one, many = _RULER_NOUN[p.value_kind]
        query = asked[0] if len(asked) == 1 else ", ".join(asked[:-1]) + ", and " + asked[-1]
        if plural:
            head = (
                f"Some special magic {many} are hidden within the following text. Make sure to memorize it. "
                f"I will quiz you about the {many} afterwards."
            )
            question = f"What are all the special magic {many} for {query} mentioned in the provided text?"
            prefix = f"The special magic {many} for {query} mentioned in the provided text are"
        else:
            head = (
                f"A special magic {one} is hidden within the following text. Make sure to memorize it. "
                f"I will quiz you about the {one} afterwards."
            )
            question = f"What is the special magic {one} for {query} mentioned in the provided text?"
            prefix = f"The special magic {one} for {query} mentioned in the provided text is"
        return frame(
            head,
            question,
            prefix,
            mode,
            needles,
            expected,
            max_tokens=_max_tokens(p, expected),
            unique=keys,
            template="ruler",
            length_convention=p.length_convention,
            context_opening="\n",
        )


def _max_tokens(p: NiahParams, expected: Expected) -> int:
    return 8 + _TOKENS_PER_VALUE[p.value_kind] * len(expected.answers)
