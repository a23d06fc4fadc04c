"""How every family frames its question and sizes its answer budget: completions mode ends with an answer
prefix for base models, which write the value at once (the family's tight budget); chat mode asks for the
answer alone, and a chat model still answers in a sentence ("The special magic number for noble-satchel
mentioned in the provided text is 8038428."), so its budget adds `CHAT_SENTENCE_TOKENS`. SmolLM2-135M-Instruct
spends up to 17 tokens before its niah answer; 64 leaves room for a longer restatement, markdown and a
short trailing clause. RULER's layout (`template: ruler`) lets the model generate at least what RULER does
(128 tokens for its needle tasks), as a published RULER score was measured with that room. The budget is not
part of the prompt: changing it changes no prompt and no id."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ctxprobe.tasks.registry import Draft, NeedleDraft
from ctxprobe.tasks.sample import Expected, Mode

Template = Literal["ctxprobe", "ruler"]
Lang = Literal["en", "zh"]
# What chat mode adds after the question, per language.
ANSWER_ONLY: dict[str, str] = {"en": " Answer with the answer only.", "zh": "请只回答答案。"}
LengthConvention = Literal["prompt", "ruler"]
# RULER's nominal length includes the tokens it lets the model generate: 128 for its needle tasks
# (`niah_*`), 30 for variable tracking (`vt`).
RULER_GENERATION_TOKENS = 128
CHAT_SENTENCE_TOKENS = 64  # added to a family's answer budget in chat mode: a sentence around the answer


def template_field() -> Any:
    """A family's `template` parameter."""
    return Field("ctxprobe", description="prompt layout: ctxprobe's, or RULER's exact strings")


def lang_field() -> Any:
    """A family's `lang` parameter: the language of its framing, needle sentences and questions."""
    return Field(
        "en",
        description="en or zh: the language of the framing, needles and question (zh: pair it "
        "with the prose:zh haystack or a Chinese text of your own)",
    )


def english_only(lang: Lang, what: str) -> None:
    """Refuse `lang` other than English for a layout or kind that exists only in English."""
    if lang != "en":
        raise ValueError(f"{what} is English only: use lang 'en' with it")


def length_convention_field(ruler: str) -> Any:
    """A family's `length_convention` parameter; `ruler` says what RULER's convention counts."""
    return Field("prompt", description=f"prompt: the length is the prompt's; ruler: {ruler}")


def frame(
    head: str,
    question: str,
    prefix: str,
    mode: Mode,
    needles: tuple[NeedleDraft, ...],
    expected: Expected,
    max_tokens: int,
    unique: tuple[str, ...] = (),
    template: Template = "ctxprobe",
    length_convention: LengthConvention = "prompt",
    ruler_gap: str = "\n",
    ruler_generation_tokens: int = RULER_GENERATION_TOKENS,
    context_opening: str | None = None,
    ruler_prefix_gap: str = " ",
    document_start: int | None = None,
    lang: Lang = "en",
) -> Draft:
    """ctxprobe's layout: `\\n\\n{question}\\n\\n{prefix}`. RULER's (lm-eval's `ruler` tasks): the
    question after `ruler_gap` (the needle tasks' `\\n`, variable tracking's `\\n\\n`) and the answer prefix
    after `ruler_prefix_gap` (lm-eval's target delimiter, mostly one space), `\\n{question} {prefix}` (chat:
    `\\n{question}` alone, as lm-eval sends it).
    `context_opening` replaces the first haystack piece's own separator (RULER's needle tasks: `\\n`);
    `document_start` is where the document starts in a head that holds it (a question placed at the start goes there)."""
    if template == "ruler":
        tail = f"{ruler_gap}{question}{ruler_prefix_gap}{prefix}" if mode == "completions" else f"{ruler_gap}{question}"
    elif mode == "completions":
        tail = f"\n\n{question}\n\n{prefix}"
    else:
        tail = f"\n\n{question}{ANSWER_ONLY[lang]}"
    if mode != "completions":
        prefix = ""
        max_tokens += CHAT_SENTENCE_TOKENS
    if template == "ruler":
        max_tokens = max(max_tokens, ruler_generation_tokens)
    reserve = ruler_generation_tokens if length_convention == "ruler" else 0
    return Draft(
        head=head,
        tail=tail,
        question=question,
        answer_prefix=prefix,
        needles=needles,
        expected=expected,
        max_tokens=max_tokens,
        unique=unique,
        reserve_tokens=reserve,
        context_opening=context_opening,
        document_start=document_start,
    )


def join_names(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
