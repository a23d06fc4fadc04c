"""Recipe -> Sample: draft the task, assemble the exact-length prompt, check every answer is placed
once and nowhere else, hash the prompt. The same recipe gives the same bytes in any process."""

from __future__ import annotations

import hashlib
import random
import threading
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from ctxprobe.tasks.absent import absent_draft, asks_absent
from ctxprobe.tasks.assemble import Assembled, assemble, whole_word
from ctxprobe.tasks.common_params import question_position
from ctxprobe.tasks.count_cache import UnitCounts
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.vocab import drawn_apart
from ctxprobe.tasks.haystack import Haystack, make_haystack
from ctxprobe.tasks.identity import needle_key, sharing_key
from ctxprobe.tasks.lengths import check_depth
from ctxprobe.tasks.placement import place_question
from ctxprobe.tasks.registry import Draft, get_family, validate_params
from ctxprobe.tasks.sample import Recipe, Sample, TokenizerIdentity, seed_window, sha256_text
from ctxprobe.tasks.sized import compose, is_sized
from ctxprobe.tasks.token_counter import TokenCounter, make_token_counter, tokenizer_id

MAX_ATTEMPTS = 32
CHAINS_KEPT = 16  # nested chains' layouts a builder keeps (one per lane in flight is what it needs)
T = TypeVar("T")


class PromptBuilder:
    """Builds samples with one token counter, and owns what it learns about that counter: its tokenizer
    identity, the tokens the endpoint adds around a prompt, and the haystack units' counts. Several
    threads may build at once: what it learns is learned once."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.tokenizer = tokenizer_id(counter)
        self._lead: dict[str, int] = {}
        self._counts: dict[str, UnitCounts] = {}
        self._learn = threading.RLock()
        self._chains: dict[tuple[object, ...], Any] = {}  # nested chains' layouts, the latest few kept

    def recipe_tokenizer(self, mode: str) -> TokenizerIdentity:
        """The tokenizer identity of this builder's recipes in `mode`. In chat mode the chat template's
        tokens are part of the prompt's budget, so a template of another size is another identity."""
        if mode == "chat" and self.lead_tokens("chat") != self.counter.bos_tokens:
            return TokenizerIdentity(self.tokenizer, self.lead_tokens("chat"))
        return TokenizerIdentity(self.tokenizer)

    def recipe(self, **fields: Any) -> Recipe:
        """A recipe counted with this builder's tokenizer (`fields` are the task fields; the haystack window
        defaults to the seed's own, as in suites)."""
        if "window" not in fields:
            fields["window"] = seed_window(fields.get("seed", 0), fields["context_tokens"])
        return Recipe(**fields, **self.recipe_tokenizer(fields.get("mode", "completions"))._asdict())

    def lead_tokens(self, mode: str) -> int:
        """Tokens the endpoint adds around the prompt text: in chat mode the chat template's, where the
        counter can measure it (a server's, or an offline one given the server's `chat_overhead`; vLLM,
        SGLang, llama-server) or a rebuilt recipe records it; otherwise BOS. Measured once."""
        with self._learn:
            if mode not in self._lead:
                lead = self.counter.bos_tokens
                if mode == "chat":
                    measure = getattr(self.counter, "chat_overhead", None)
                    overhead = measure() if callable(measure) else None
                    lead = overhead if isinstance(overhead, int) else lead
                self._lead[mode] = lead
            return self._lead[mode]

    def _lead_of(self, recipe: Recipe) -> int:
        """The lead a recipe is built with: this builder's, for a recipe of its tokenizer; for a chat recipe
        that records its template's size (`chat_template_tokens`, measured at the server) and a counter that
        cannot measure one (a GGUF read offline), that size. The builder's own lead is left as it is."""
        expected = self.recipe_tokenizer(recipe.mode)
        if recipe.tokenizer_identity == expected:
            return self.lead_tokens(recipe.mode)
        if (
            recipe.mode == "chat"
            and recipe.tokenizer == self.tokenizer
            and recipe.chat_template_tokens is not None
            and not callable(getattr(self.counter, "chat_overhead", None))
        ):
            return recipe.chat_template_tokens
        raise UserError(
            f"the token counter {self.counter.spec} is tokenizer {_shown(expected)}, but sample "
            f"{recipe.sample_id()} was counted with {_shown(recipe.tokenizer_identity)}: give the same "
            "tokenizer"
        )

    def unit_counts(self, haystack_spec: str) -> UnitCounts:
        """One UnitCounts per haystack, so a suite counts each unit once."""
        with self._learn:
            if haystack_spec not in self._counts:
                self._counts[haystack_spec] = UnitCounts(haystack(haystack_spec), self.counter)
            return self._counts[haystack_spec]

    def chain_layout(
        self, recipe: Recipe, lead: int, lay_out: Callable[[PromptBuilder, Recipe, int], T], part: str = "layout"
    ) -> T:
        """A nested chain's layout (`tasks/nested.py`), or another `part` of what its cells share (its absent
        questions: `tasks/nested_absent.py`), laid out once for all the chain's cells: a lane sends a chain's
        requests one after another, so the last few chains laid out are kept."""
        key = (sharing_key(recipe), lead, part)
        with self._learn:
            found = self._chains.get(key)
        if found is None:
            found = lay_out(self, recipe, lead)
            with self._learn:
                self._chains[key] = found
                while len(self._chains) > CHAINS_KEPT:
                    del self._chains[next(iter(self._chains))]
        return found

    def build(self, recipe: Recipe) -> Sample:
        """Build the sample a recipe defines; the recipe must name this builder's tokenizer."""
        lead = self._lead_of(recipe)
        if recipe.nested is not None and asks_absent(recipe.params):  # another key's question: tasks/nested_absent.py
            from ctxprobe.tasks.nested_absent import build_nested_absent

            return build_nested_absent(self, recipe, lead)
        if recipe.nested is not None:  # a chain's stream: tasks/nested.py
            from ctxprobe.tasks.nested import build_nested

            return build_nested(self, recipe, lead)
        family = get_family(recipe.family)
        params = validate_params(family, recipe.params)
        check_depth(recipe.depth)
        key = needle_key(recipe)  # the needles and values depend on what is asked, never on the tokenizer
        if is_sized(family):
            draft, built = compose(
                family,
                params,
                recipe.mode,
                hashlib.sha256(f"{key}#0".encode()).digest(),
                recipe.context_tokens,
                self.counter,
                lead,
                question_position(params),
                recipe.depth,
            )
            return self._sample(recipe, draft, built)
        counts = self.unit_counts(recipe.haystack)
        for attempt in range(MAX_ATTEMPTS):
            rng = random.Random(hashlib.sha256(f"{key}#{attempt}".encode()).digest())
            draft = family.draft(params, recipe.depth, recipe.mode, rng)
            if asks_absent(params):
                draft = absent_draft(draft, absent_question_draw(family, params, recipe, draft, f"{key}#{attempt}"))
            draft = place_question(draft, question_position(params))
            target = recipe.context_tokens - draft.reserve_tokens
            built = assemble(draft, counts, target, lead, recipe.window)
            if answers_placed_once(built.prompt, draft, [n.text for n in built.needles]):
                break
        else:
            raise UserError(
                f"could not place unique answers in haystack {recipe.haystack!r} after {MAX_ATTEMPTS} tries "
                "(the haystack already contains the task's values)"
            )
        return self._sample(recipe, draft, built)

    def _sample(self, recipe: Recipe, draft: Draft, built: Assembled) -> Sample:
        return Sample(
            sample_id=recipe.sample_id(),
            recipe=recipe,
            prompt=built.prompt,
            prompt_sha256=sha256_text(built.prompt),
            planned_tokens=built.planned_tokens,
            approximate=self.counter.approximate,
            question=draft.question,
            answer_prefix=draft.answer_prefix,
            max_tokens=draft.max_tokens,
            expected=draft.expected,
            needles=built.needles,
            measures=draft.measures,
            messages=list(draft.messages),
        )


_BUILDERS: weakref.WeakKeyDictionary[object, PromptBuilder] = weakref.WeakKeyDictionary()
_BUILDERS_LOCK = threading.Lock()


def builder_for(counter: TokenCounter) -> PromptBuilder:
    """The one PromptBuilder of a counter object (kept while the counter lives)."""
    with _BUILDERS_LOCK:
        builder = _BUILDERS.get(counter)
        if builder is None:
            builder = _BUILDERS[counter] = PromptBuilder(counter)
        return builder


def build_sample(recipe: Recipe, counter: TokenCounter | None = None) -> Sample:
    """Build the sample a recipe defines with `counter` (which must be the recipe's tokenizer, reached
    anywhere). Without one, only recipes counted with the estimate can be built."""
    if counter is None:
        if not recipe.tokenizer.startswith("estimate"):
            raise UserError(
                f"sample {recipe.sample_id()} was counted with tokenizer {recipe.tokenizer}: "
                "give its token counter (e.g. --token-counter local:PATH or server:URL)"
            )
        counter = token_counter(recipe.tokenizer)  # the template's size: in the recipe
    return builder_for(counter).build(recipe)


def _shown(identity: TokenizerIdentity) -> str:
    chat = identity.chat_template_tokens
    return identity.tokenizer if chat is None else f"{identity.tokenizer} (chat template: {chat} tokens)"


def absent_question_draw(family: Any, params: Any, recipe: Recipe, present: Draft, seed_text: str) -> Draft:
    """The draw whose question an absent recipe asks (`tasks/absent.py`): the family's own, from a seed of its
    own, with every key and value drawn apart from the present draft's."""
    rng = random.Random(hashlib.sha256(f"{seed_text}#absent".encode()).digest())
    with drawn_apart({*present.unique, *(n.answer for n in present.needles)}):
        return family.draft(params, recipe.depth, recipe.mode, rng)


def answers_placed_once(prompt: str, draft: Draft, needle_units: list[str]) -> bool:
    """Each answer (and each string the family marks unique) occurs in the prompt exactly where the
    needles, head and tail put it: the haystack itself holds none, not even inside a longer token."""
    placed = "\x00".join([draft.head, *needle_units, draft.tail])
    for text in {*draft.unique, *(n.answer for n in draft.needles)}:
        if prompt.count(text) == placed.count(text):
            continue  # not even a substring of the haystack (the common case: one fast scan)
        pattern = whole_word(text)
        if len(pattern.findall(prompt)) != len(pattern.findall(placed)):
            return False
    return True


@lru_cache(maxsize=16)
def haystack(spec: str) -> Haystack:
    return make_haystack(spec)


@lru_cache(maxsize=8)
def token_counter(spec: str) -> TokenCounter:
    return make_token_counter(spec)
