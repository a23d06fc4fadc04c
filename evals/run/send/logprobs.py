"""A run's answer probabilities: for each sample, the expected answer as the model would write it (the gold
text) and its teacher-forced log-probabilities after the prompt (runners/answer_logprobs.py), read from the
answer request and, past a divergence, from extra one-token requests on the same replica, with the sample's
chain in their session header. The run's loop sends them on the sample's lane right after its answer, before
the lane sends anything else (evals/run/send/loop.py), so they find the answer's prompt in the prefix cache.

The gold text is the sample's one expected answer after the answer prefix (completions: with the space the
prefix leaves, as `Answer: 123`; chat: the assistant's reply itself, which the prompt asks to be the answer
alone). A sample with several expected values (multi-value needles, a chain, a set) has no single rendering,
and a reproduced passage (mrcr) is no short answer: their logprobs stay None, saying so. Nothing here ever
changes a sample's binary result: a failure of the extra requests leaves `logprobs` None with the reason."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxprobe.runners.answer_logprobs import Unmeasurable, gold_ids, measure
from ctxprobe.runners.daemon_threads import in_daemon_thread
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.engines import adapter, known_engines
from ctxprobe.runners.http_json import EndpointCalls, display_url
from ctxprobe.runners.replica_calls import ReplicaCalls, calls_to
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE, AnswerLogprobs, Response
from ctxprobe.runners.retry import CallFailed
from ctxprobe.runners.settings import LogprobSettings
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import Sample

# Answer kinds whose expected answer is no single short text to teacher-force.
NO_SINGLE_RENDERING = frozenset({"values", "chain", "nodes", "set", "mrcr"})


def gold_text(sample: Sample) -> str | None:
    """The expected answer as the model would write it after the prompt, or None where there is no one
    rendering of it."""
    answers = sample.expected.answers
    if len(answers) != 1 or sample.expected.kind in NO_SINGLE_RENDERING or not answers[0].strip():
        return None
    value = answers[0].strip()
    if sample.recipe.mode == "chat" or not sample.prompt or sample.prompt[-1].isspace():
        return value
    return " " + value


def separator_tokens(with_separator: list[int], context: list[int], gold: list[int]) -> int:
    """How many of the gold's first tokens are the separator alone: the tokens `prompt + separator` adds to
    the prompt's, where the gold's tokens begin with them and hold more (0 where the tokenizer joins the
    space to the answer's first characters, ` 9` as one token: that token then counts, format and all)."""
    sep = with_separator[len(context) :]
    if with_separator[: len(context)] != context or not 0 < len(sep) < len(gold) or gold[: len(sep)] != sep:
        return 0
    return len(sep)


def supported(engine: str) -> bool:
    """Whether the engine gives the gold's logprobs cheaply (docs/ENGINES.md, "Log-probabilities")."""
    return engine in known_engines() and adapter(engine).forced_logprobs


@dataclass
class LogprobCapture:
    """Measures each sample's answer probabilities through `client` (the run's client for one mode)."""

    client: EndpointClient
    engine: str
    top: int

    calls: EndpointCalls | ReplicaCalls = field(init=False)

    def __post_init__(self) -> None:
        config: EndpointConfig = self.client.config
        self.calls = calls_to(config.base_urls, policy=config.retry_policy, api_key_env=config.api_key_env)
        self.adapter = adapter(self.engine)
        self.top = min(self.top, self.adapter.max_top_logprobs)

    @property
    def answer_body(self) -> Mapping[str, Any]:
        """What the answer request adds to its body (vLLM: tokens as their ids)."""
        return self.adapter.logprob_body

    def _replica(self, response: Response) -> int | None:
        shown = [display_url(url) for url in self.client.config.base_urls]
        return shown.index(response.endpoint) if response.endpoint in shown else None

    async def measure(
        self, sample: Sample, response: Response, seed: int
    ) -> tuple[AnswerLogprobs | Literal["unavailable"] | None, str | None]:
        """The sample's `AnswerLogprobs`, or None and why not; "unavailable" where the answer came back
        without logprobs (an engine that ignores the request: no extra request is sent to it). Only this
        sample's logprobs can fail here."""
        if not response.generated:
            return LOGPROBS_UNAVAILABLE, "the answer came back without logprobs although they were asked for"
        gold = gold_text(sample)
        if gold is None:
            return None, (
                f"no single rendering of the expected answer ({sample.expected.kind}, "
                f"{len(sample.expected.answers)} values)"
            )
        chat = self.client.config.mode == "chat"
        messages = (sample.messages or [{"role": "user", "content": sample.prompt}]) if chat else None
        model = await self.client.resolve_model()
        try:
            context, full = await in_daemon_thread(
                lambda: self.adapter.answer_tokens(
                    self.calls, prompt=sample.prompt, gold=gold, messages=messages, model=model
                )
            )
            ids = gold_ids(context, full)
            if response.prompt_tokens is not None and response.prompt_tokens != len(context):
                raise Unmeasurable(
                    f"the engine served {response.prompt_tokens} prompt tokens, its tokenize call "
                    f"gives {len(context)}: the forced requests would not continue the same prompt"
                )
            found = await measure(
                self.client,
                context,
                ids,
                gold,
                response.generated,
                top=self.top,
                seed=seed,
                affinity=self._replica(response),
                extra_body=self.answer_body,
                chain=chain_key(sample.recipe),
            )
            if not chat and gold[:1].isspace():
                found = found.model_copy(
                    update={
                        "answer_from": await in_daemon_thread(
                            lambda: separator_tokens(
                                self.adapter.text_tokens(
                                    self.calls, sample.prompt + gold[: len(gold) - len(gold.lstrip())], model
                                ),
                                context,
                                ids,
                            )
                        )
                    }
                )
            return found, None
        except Unmeasurable as why:
            return None, str(why)
        except EndpointError as err:
            return None, f"an extra logprob request failed: {err.detail}"
        except CallFailed as err:
            return None, f"a tokenize call for the logprobs failed: {err}"


def say_unavailable(engine: str, asked: bool | None) -> None:
    """One line on stderr: the engine gives no answer probabilities, so samples record them as unavailable."""
    how = "--logprobs was asked, but " if asked else ""
    print(
        f"ctxprobe: {how}engine {engine} gives no teacher-forced log-probabilities ctxprobe can read cheaply "
        f'(docs/ENGINES.md, "Log-probabilities"): every sample records logprobs as {LOGPROBS_UNAVAILABLE!r}; '
        "binary results are unaffected",
        file=sys.stderr,
    )


def wanted(settings: LogprobSettings, engine: str) -> bool | None:
    """True: measure; None: record unavailable (asked for or left to the engine, which cannot); False: off."""
    if settings.logprobs is False:
        return False
    return True if supported(engine) else None
