"""The typed records a generator produces: a recipe (what to build) and a sample (what was built)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from ctxprobe.tasks import identity
from ctxprobe.tasks.family_index import family_version
from ctxprobe.tasks.limits import MAX_CONTEXT_TOKENS

Mode = Literal["completions", "chat"]
_CHAT_SUFFIX = re.compile(r"^(?P<tokenizer>.+)\+chat(?P<tokens>\d+)$")  # how records before the typed field wrote it


class TokenizerIdentity(NamedTuple):
    """Which tokenizer counts a recipe, and in chat mode the tokens its chat template adds where that
    differs from a bare BOS (a template of another size is another identity)."""

    tokenizer: str
    chat_template_tokens: int | None = None


Layout = Literal["independent", "nested"]


class NestedGrid(BaseModel):
    """The grid of one chain of the nested layout (`tasks/nested.py`): every length and depth whose needle the
    chain's haystack stream holds. Each prompt of the chain is the stream's first tokens, so it holds the needles
    of every (length, depth) that falls inside it, and the recipe needs the whole grid to rebuild its prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lengths: tuple[int, ...] = Field(min_length=1)
    depths: tuple[float, ...] = Field(min_length=1)
    block: int | None = Field(
        None,
        ge=2,
        description="the engine's prefix-reuse unit in tokens (it reuses whole "
        "blocks only): each length's shared stream is cut on a block boundary where the "
        "exact-length tolerance allows; None: cut at the last unit that fits (left out of "
        "the record when None)",
    )

    @model_serializer(mode="wrap")
    def _without_unset_block(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A grid without a block writes no such field: its record and ids stay as before."""
        out: dict[str, Any] = handler(self)
        if out.get("block", 0) is None:
            del out["block"]
        return out

    @model_validator(mode="after")
    def _sorted_once(self) -> NestedGrid:
        if list(self.lengths) != sorted(set(self.lengths)) or list(self.depths) != sorted(set(self.depths)):
            raise ValueError("a nested grid's lengths and depths are sorted and distinct")
        return self


class Recipe(BaseModel):
    """Everything that defines one prompt: what it asks (the task fields) and which tokenizer counts it.
    The same recipe rebuilds a byte-identical prompt. `tokenizer` is the tokenizer's identity (a
    fingerprint of how it splits a fixed text, see `tasks.token_counter.tokenizer_id`), never where it is
    reached: the same model served at two addresses gives the same recipes, ids and prompts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    params: dict[str, Any] = Field(default_factory=dict)
    haystack: str = "prose"
    context_tokens: int = Field(gt=0, le=MAX_CONTEXT_TOKENS)
    depth: float = 50.0
    seed: int = 0
    window: int = Field(
        0,
        ge=0,
        description="the haystack unit the prompt's haystack starts at: each seed "
        "reads its own part of the haystack (see `seed_window`)",
    )
    mode: Mode = "completions"
    tokenizer: str = "estimate:4"
    chat_template_tokens: int | None = Field(
        None,
        ge=0,
        description="chat mode: the tokens the chat template "
        "adds, where they are not a bare BOS (left out of the record "
        "when None)",
    )
    generator_version: str = Field(
        "",
        description="the family's generator version (`@task_family(..., "
        "version=...)`); filled in from the family registry when not given",
    )
    nested: NestedGrid | None = Field(
        None,
        description="the nested layout's chain grid (one haystack stream per "
        "task and seed, every length its first tokens); None: the independent layout, "
        "a prompt of its own per cell (left out of the record when None)",
    )

    @model_validator(mode="before")
    @classmethod
    def _older_records(cls, data: Any) -> Any:
        """Records of generator version 1 named the counter by its spec (`token_counter`). A recipe that
        names no generator version is built by its family's current one."""
        if isinstance(data, dict) and "token_counter" in data and "tokenizer" not in data:
            data = {**data, "tokenizer": data["token_counter"]}
            del data["token_counter"]
        old = _CHAT_SUFFIX.match(data.get("tokenizer") or "") if isinstance(data, dict) else None
        if old and data.get("chat_template_tokens") is None:  # `tok+chatN`: the template's size, typed now
            data = {**data, "tokenizer": old["tokenizer"], "chat_template_tokens": int(old["tokens"])}
        if isinstance(data, dict) and not data.get("generator_version") and isinstance(data.get("family"), str):
            data = {**data, "generator_version": family_version(data["family"])}
        return data

    @model_serializer(mode="wrap")
    def _without_unset_chat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A recipe without a chat template size writes no such field: its record and ids stay as before."""
        out: dict[str, Any] = handler(self)
        for name in ("chat_template_tokens", "nested"):  # unset: the record and ids stay as before
            if name in out and out[name] is None:
                del out[name]
        return out

    @property
    def layout(self) -> Layout:
        return "independent" if self.nested is None else "nested"

    @property
    def tokenizer_identity(self) -> TokenizerIdentity:
        return TokenizerIdentity(self.tokenizer, self.chat_template_tokens)

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def task_fields(self) -> dict[str, Any]:
        """What the sample asks, without the tokenizer: the needles and values are drawn from these alone,
        and runs counted with different tokenizers pair on them."""
        return identity.task_fields(self)

    def task_key(self) -> str:
        """The pairing key across tokenizers (see `tasks.identity`)."""
        return identity.task_key(self)

    def sample_id(self) -> str:
        """A short stable id of the whole recipe, tokenizer identity included (see `tasks.identity`)."""
        return identity.sample_id(self)


class NeedleSpot(BaseModel):
    """One inserted piece of text (target needle, distractor or hop) and where it landed."""

    model_config = ConfigDict(frozen=True)

    role: Literal["target", "distractor", "hop"]
    text: str
    answer: str
    char_offset: int
    token_offset: int
    depth_pct: float


class Expected(BaseModel):
    """What a correct answer contains, in the form the scorers need."""

    model_config = ConfigDict(frozen=True)

    # The scorer's name (registered with `@answer_kind`, tasks/answers/kinds.py): value, values, string, chain
    # (evals/scoring/score.py); any: one of the answers (QA's alternatives); exact, number, set, contains: the
    # rules of a user's needle file (`tasks/families/needles_rules.py`); or a kind a family registers beside itself
    # (name, nodes, mrcr).
    kind: str = Field(min_length=1)
    answers: list[str]
    chain: list[str] = Field(default_factory=list)


class Sample(BaseModel):
    """A built prompt with its answer and placement facts. The prompt itself is not serialized:
    `samples.jsonl` carries the recipe and sha256, and the recipe rebuilds the prompt."""

    model_config = ConfigDict(frozen=True)

    sample_id: str
    recipe: Recipe
    prompt: str = Field(default="", exclude=True, repr=False)
    prompt_sha256: str
    planned_tokens: int
    approximate: bool
    question: str
    answer_prefix: str
    max_tokens: int
    expected: Expected
    needles: list[NeedleSpot]
    measures: dict[str, float] = Field(
        default_factory=dict,
        description="figures the family measured on what it built (the latent family's lexical_overlap)",
    )
    # A conversation family's chat messages (rebuilt from the recipe, like the prompt); empty: one user message.
    messages: list[dict[str, str]] = Field(default_factory=list, exclude=True, repr=False)


WINDOW_STEP_MAX = 4096  # units between two seeds' windows at most: bounds what a cold count cache counts


def seed_window(seed: int, context_tokens: int) -> int:
    """Where seed `seed`'s haystack starts, in units. Seeds start a whole prompt's worth of units apart
    (units are about 8 or more tokens) up to `WINDOW_STEP_MAX` units, so the samples of one cell read
    different text (wholly different up to ~32K tokens, shifted by tens of thousands of tokens beyond),
    while a depth sweep of one seed shares its prefix, which a prefix cache can reuse."""
    return seed * min(-(-context_tokens // 8), WINDOW_STEP_MAX)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
