"""What every engine adapter says about its engine, and the open registry that finds an adapter by name.

A new engine is one module in runners/engines/ (found and imported by the package), or in another package
that names it under the `ctxprobe.engines` entry point group, holding one `@register`ed subclass: probe, doctor, the server tokenizer, the too-long parser and the metrics scrape
all read the registry, so nothing else names it.

An adapter holds one engine's facts from docs/ENGINES.md: how it is recognised (its `/v1/models`
`owned_by` and its own identifying call), where it states its context length, version and slots, its
tokenize call, how it measures a chat template, the shape of its too-long rejection and its Prometheus
metric names. It never sends anything itself: callers pass an `EndpointCalls` (runners.http_json), which
carries the API key to every call."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ctxprobe.runners.answer_logprobs import Unmeasurable
from ctxprobe.tasks.plugins import Registry


class Calls(Protocol):
    """JSON calls to one endpoint; both answer the body of a 200 reply, else None."""

    def get(self, path: str) -> Any: ...

    def post(self, path: str, payload: Any) -> Any: ...


@dataclass(frozen=True)
class Call:
    """One request an adapter wants sent: POST `path` with `payload`."""

    path: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class TooLong:
    """A rejection for length: the endpoint's stated limit and prompt size, where it said them. Some engines
    state only a lower bound of the prompt's size (vLLM 0.32: "at least N input tokens", N the limit + 1):
    that is `prompt_at_least`, never the count."""

    limit: int | None
    prompt_tokens: int | None
    message: str
    prompt_at_least: int | None = None

    def detail(self) -> str:
        said = f"limit {self.limit} tokens" if self.limit is not None else "limit not stated"
        if self.prompt_tokens is not None:
            said += f", prompt {self.prompt_tokens} tokens"
        elif self.prompt_at_least is not None:
            said += f", prompt at least {self.prompt_at_least} tokens"
        return f"prompt too long for the endpoint ({said}): {self.message}"


T = TypeVar("T")


@dataclass(frozen=True)
class Stated(Generic[T]):
    """A fact about a deployment and where it was read (`GET /props default_generation_settings.n_ctx`,
    `config.json max_position_embeddings (/models/x/config.json)`): every lint line names both."""

    value: T
    source: str


def dig(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]..., or None where a step is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def metric_labels(text: str, name: str) -> dict[str, str]:
    """The labels of metric `name`'s first sample in a Prometheus text (an info metric's facts)."""
    match = re.search(rf"^{re.escape(name)}\{{([^}}]*)\}}", text, re.MULTILINE)
    return dict(_LABEL.findall(match.group(1))) if match else {}


_LABEL = re.compile(r'(\w+)="([^"]*)"')


def positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def first_int(patterns: Sequence[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


class EngineAdapter(ABC):
    """One engine's facts. Subclasses set the class attributes and the calls their engine differs in."""

    name: ClassVar[str]
    owned_by: ClassVar[str]  # what the engine writes into GET /v1/models `owned_by`
    # Where it is tried when nothing hints which engine answers: cheap identifying calls first, and a
    # too-long wording that contains another's (llama-cpp-python's holds vLLM's) before that one.
    probe_rank: ClassVar[int] = 100
    # The doctor's advice where cached prompt tokens or /metrics are missing (the engine's own flag).
    cached_tokens_advice: ClassVar[str] = ""
    metrics_advice: ClassVar[str] = ""
    metrics: ClassVar[Mapping[str, str]] = {}  # ctxprobe's name -> the engine's Prometheus name
    # Why the engine may reuse less of a shared prefix than a run's layout allows, each with the setting that
    # restores it (docs/ENGINES.md, "Prefix reuse"): the run's reuse line names them where reuse falls short,
    # after the causes of any engine (`REUSE_CAUSES_ANY`).
    reuse_causes: ClassVar[tuple[str, ...]] = ()
    # ctxprobe's metric name (in `metrics`) whose counter is the prompt tokens the engine computed (its cached
    # ones left out), where it has one: the reply's cached tokens are held against it.
    computed_metric: ClassVar[str | None] = None
    # its /metrics states the unit it reuses a prefix in (`reuse_block`): the probe reads it there
    states_reuse_block: ClassVar[bool] = False

    def reuse_block(self, metrics_text: str) -> int | None:
        """The tokens the engine reuses a cached prefix in whole multiples of, as its /metrics text states
        them; None: any number of tokens (or not stated)."""
        return None

    context_source: ClassVar[str | None] = None  # the call the context length comes from
    # too-long rejections (HTTP 400): a marker that says "this is one", then where N and M are said
    too_long_marker: ClassVar[re.Pattern[str] | None] = None
    too_long_limit: ClassVar[tuple[re.Pattern[str], ...]] = ()
    too_long_prompt: ClassVar[tuple[re.Pattern[str], ...]] = ()
    too_long_prompt_at_least: ClassVar[tuple[re.Pattern[str], ...]] = ()  # where only a lower bound is said
    # the engine answers a model name it does not serve with 404 (vLLM, SGLang); others serve whatever is asked
    checks_model_name: ClassVar[bool] = False
    # the request field that caps the tokens a reasoning model spends thinking (docs/ENGINES.md), if any
    reasoning_budget_field: ClassVar[str | None] = None

    # --- log-probabilities (docs/ENGINES.md, "Log-probabilities") ------------------------------------
    # The engine reports generated tokens' logprobs with their ids, takes a prompt of token ids and forces a
    # token by logit_bias while reporting its unbiased logprob: the gold answer can be teacher-forced.
    forced_logprobs: ClassVar[bool] = False
    logprob_body: ClassVar[Mapping[str, Any]] = {}  # what an answer request adds to get its tokens' ids
    max_top_logprobs: ClassVar[int] = 20  # the most alternatives per position it accepts

    def answer_tokens(
        self, calls: Calls, *, prompt: str, gold: str, messages: list[dict[str, str]] | None, model: str | None
    ) -> tuple[list[int], list[int]]:
        """The token ids of what the engine serves (the prompt, BOS and chat template included) and of the
        same with the gold text after it. Completions: the prompt as text (`messages` None); chat: the
        conversation with the generation prompt, where the engine can apply its template through a call."""
        if messages is not None:
            raise Unmeasurable(f"{self.name}: no call applies the chat template to a conversation")
        return self.text_tokens(calls, prompt, model), self.text_tokens(calls, prompt + gold, model)

    def text_tokens(self, calls: Calls, text: str, model: str | None) -> list[int]:
        """The token ids the engine reads `text` as, a completions prompt (special tokens included)."""
        return self._ids(calls, self.tokenize_call(text, special=True, model=model))

    def _ids(self, calls: Calls, call: Call) -> list[int]:
        body = calls.post(call.path, call.payload)
        tokens = self.read_tokens(body) if isinstance(body, Mapping) else None
        if tokens is None:
            raise Unmeasurable(f"{self.name}: {call.path} gave no tokens")
        return tokens

    # --- the cache path (docs/ENGINES.md, "Cache path") ------------------------------------------------
    cold_path: ClassVar[str | None] = None  # how a request asks to be prefilled cold, as said in lines
    # where there is no per-request cold path: what the engine offers instead, in one line
    no_cold_path: ClassVar[str] = "no per-request cold prefill is known for this engine"

    def cold_prefill(self) -> dict[str, Any] | None:
        """What a request adds to its body to be prefilled without the prefix cache (fresh values on each
        call where the engine needs them), or None where the engine has no per-request cold path."""
        return None

    # --- recognition and facts ------------------------------------------------------------------------
    @abstractmethod
    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        """The body of the engine's own identifying call when the endpoint is this engine, else None."""

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        """The context length the engine states (a model card from /v1/models, the identifying body)."""
        return None

    def version(self, ident: Mapping[str, Any]) -> str | None:
        value = dig(ident, "version")
        return str(value) if value is not None else None

    def slots(self, ident: Mapping[str, Any]) -> int | None:
        """How many requests it serves at once, where it says (llama-server's slots)."""
        return None

    def deployment_facts(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> dict[str, Stated[Any]]:
        """What the engine states about its deployment, by `runners.engine_facts.EngineFacts` field name:
        `served_context`, `slots`, and where an engine states them `trained_context`, `context_shift`,
        `model_path`, `config_overrides` (a model-config override the engine applies)."""
        facts: dict[str, Stated[Any]] = {}
        context = self.context_length(card, ident)
        if context is not None:
            facts["served_context"] = Stated(context, self.context_source or f"{self.name}'s context length")
        slots = self.slots(ident)
        if slots is not None:
            facts["slots"] = Stated(slots, f"{self.name}'s slots")
        return facts

    # --- tokenize -------------------------------------------------------------------------------------
    adds_bos_always: ClassVar[bool] = False  # its tokenize call counts a BOS whatever it is asked

    @abstractmethod
    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        """The call that tokenizes `text` (with the BOS the engine adds to prompts when `special`)."""

    def read_tokens(self, body: Mapping[str, Any]) -> list[int] | None:
        tokens = body.get("tokens")
        if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens):
            return tokens
        return None

    count_field: ClassVar[str | None] = None  # where the count call's answer states the count, if it does

    def read_count(self, body: Mapping[str, Any]) -> int | None:
        if self.count_field is not None:
            count = body.get(self.count_field)
            return count if isinstance(count, int) and not isinstance(count, bool) else None
        tokens = self.read_tokens(body)
        return len(tokens) if tokens is not None else None

    def count_call(self, text: str, *, special: bool, model: str | None) -> Call:
        """The cheapest call that counts `text` (defaults to the tokenize call)."""
        return self.tokenize_call(text, special=special, model=model)

    # Counting many texts in one call (docs/ENGINES.md, "Tokenize"): where the engine takes a list, a cold
    # 1M-token prompt's 50,000 haystack units are a few hundred calls instead of 50,000.
    def batch_count_call(self, texts: Sequence[str], *, model: str | None) -> Call | None:
        """One call that counts each of `texts` apart (no special tokens), or None where the engine has none."""
        return None

    def read_batch_counts(self, body: Mapping[str, Any], n: int) -> list[int] | None:
        """The counts of the `n` texts of a `batch_count_call`, or None where the body is not that answer."""
        return None

    def chat_call(self, messages: list[dict[str, str]], model: str | None) -> Call | None:
        """A call that counts a chat request's tokens with the template applied, where there is one."""
        return None

    def read_chat_count(self, body: Mapping[str, Any]) -> int | None:
        return positive_int(body.get("count"))

    # --- too long -------------------------------------------------------------------------------------
    def parse_too_long(self, body: object, text: str, message: str) -> TooLong | None:
        """A `TooLong` when `text` (the error's message and whole body) is this engine's rejection."""
        if self.too_long_marker is None or not self.too_long_marker.search(text):
            return None
        return TooLong(
            limit=first_int(self.too_long_limit, text),
            prompt_tokens=first_int(self.too_long_prompt, text),
            message=message,
            prompt_at_least=first_int(self.too_long_prompt_at_least, text),
        )


# Causes of lost reuse that belong to no one engine: the deployment and the run.
REUSE_CAUSES_ANY = (
    "prefix caching off",
    "eviction under memory pressure (more lanes' contexts than the cache holds: fewer lanes with --concurrency, "
    "or more cache memory)",
    "a router in front of several workers that does not keep a chain on one (no session header: drop "
    "--session-header none; round_robin: route by the header, e.g. vllm-router --policy consistent_hash)",
)


def with_model(payload: dict[str, Any], model: str | None) -> dict[str, Any]:
    return {"model": model, **payload} if model else payload


ENTRY_POINT_GROUP = "ctxprobe.engines"  # [project.entry-points."ctxprobe.engines"] name = "module"
# Listed in the order engines are tried (`probe_rank`, then name).
ENGINES: Registry[EngineAdapter] = Registry(
    "engine", group=ENTRY_POINT_GROUP, order=lambda name, found: (found.probe_rank, name)
)


def register(cls: type[EngineAdapter]) -> type[EngineAdapter]:
    """Class decorator: one adapter instance per engine name."""
    ENGINES.add(cls.name, cls())
    return cls


def unregister(name: str) -> None:
    """Forget engine `name` (an adapter registered for a while, e.g. by a test)."""
    ENGINES.remove(name)


def registered() -> dict[str, EngineAdapter]:
    return ENGINES.items()
