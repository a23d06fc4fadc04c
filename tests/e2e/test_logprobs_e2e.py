"""Answer probabilities on the real embedded engine (llama.cpp from the xllamacpp wheel): the cheap path
(the answer request's own logprobs, then a continuation or forced one-token requests on the cached prefix)
gives what one forced request per gold position gives; a run's binary answers and scores are the same with
logprobs on and off; chat mode on SmolLM2-135M-Instruct measures the assistant's answer after the
template's generation prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.answer_logprobs import gold_ids, measure
from ctxprobe.runners.endpoint import EndpointClient
from ctxprobe.runners.engines import adapter
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.response import AnswerLogprobs
from ctxprobe.runners.server_tokenizer import make_counter
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Sample
from tests.instruct_model import SKIP_REASON, smollm2_gguf

pytestmark = pytest.mark.engine
# nats: a position read at the end of the answer request's prefill and the same position read by a one-token
# request on the cache are computed in other batch shapes (measured: up to 0.031 on SmolLM2 chat at 1K)
TOLERANCE = 0.05
PROMPT = (
    "The capital of France is Paris. The capital of Italy is Rome.\nQuestion: What is the capital of Italy?\nAnswer:"
)
TOP = 5


async def forced_everywhere(client: EndpointClient, context: list[int], gold: list[int]) -> list[float]:
    """The independent computation: log P(gold_j | context + gold[:j]), one forced request per position."""
    out = []
    for j, want in enumerate(gold):
        reply = await client.next_token(
            context + gold[:j], force=want, top=TOP, planned_tokens=len(context) + j, seed=0
        )
        assert reply.generated and reply.generated[0].id == want
        out.append(reply.generated[0].logprob)
    return out


def test_the_cached_prefix_path_equals_one_forced_request_per_position(embedded_engine: EmbeddedEngine) -> None:
    """A gold the model writes greedily (read free from the answer request) and golds it leaves at once or
    midway (read by continuation and forced requests): each the same as every position forced alone."""
    llama = adapter("llama-server")
    calls = EndpointCalls(embedded_engine.base_url)

    async def go() -> list[tuple[AnswerLogprobs, list[float]]]:
        out = []
        async with EndpointClient(embedded_engine.endpoint_config(stream=True)) as client:
            for gold in (" Rome", " Rome. The capital of Spain is Madrid.", " Milan, of course"):
                context, full = llama.answer_tokens(calls, prompt=PROMPT, gold=gold, messages=None, model=None)
                ids = gold_ids(context, full)
                answer = await client.send(
                    PROMPT, max_tokens=len(ids) + 2, planned_tokens=len(context), seed=0, logprobs=TOP
                )
                assert answer.prompt_tokens == len(context)
                found = await measure(client, context, ids, gold, answer.generated, top=TOP, seed=0)
                out.append((found, await forced_everywhere(client, context, ids)))
        return out

    results = asyncio.run(go())
    for found, independent in results:
        assert found.logprobs == pytest.approx(independent, abs=TOLERANCE), found.gold
        assert len(found.top) == len(found.logprobs) and all(len(t) == TOP for t in found.top)
    rome, sentence, milan = (found for found, _ in results)
    assert rome.method == "generated" and rome.extra_requests == 0 and rome.first_divergence is None
    assert milan.first_divergence == 0 and milan.p_answer < rome.p_answer
    assert sentence.extra_requests < len(sentence.token_ids)  # cheaper than one request per position
    assert milan.extra_requests >= 1 and milan.extra_prompt_tokens >= milan.extra_requests * len(PROMPT) // 8


def test_binary_answers_and_scores_are_the_same_with_logprobs_on(
    embedded_engine: EmbeddedEngine, tmp_path: Path
) -> None:
    """Compared with a run whose prompts the server holds as it held the logprob run's: an answer to a prompt
    prefilled cold can differ from the answer to the same prompt served from the cache, logprobs or not
    (docs/ENGINES.md), so a first run warms the cache for both."""
    common = dict(
        endpoints=[embedded_engine.base_url],
        mode="completions",
        family="niah",
        lengths="1k",
        depths="50",
        samples=1,
        quiet=True,
        no_report=True,
    )
    ctxprobe.run(**common, logprobs=False, results_dir=str(tmp_path / "warm"))
    on = ctxprobe.run(**common, results_dir=str(tmp_path / "on"))  # the default: on for llama-server
    off = ctxprobe.run(**common, logprobs=False, results_dir=str(tmp_path / "off"))
    assert off.exit_code == on.exit_code == 0
    without, with_ = load_run(off.run_dir), load_run(on.run_dir)
    assert without.manifest.logprobs is None
    totals = with_.manifest.logprobs
    assert totals is not None and totals.samples_measured == 1 and totals.top_logprobs == 5
    pairs = {r.sample.sample_id: r for r in without.records}
    for record in with_.records:
        twin = pairs[record.sample.sample_id]
        assert record.response.text == twin.response.text
        assert record.score == twin.score and record.error == twin.error
        assert twin.logprobs is None
        lp = record.logprobs
        assert isinstance(lp, AnswerLogprobs), record.logprobs_detail
        assert lp.gold == " " + record.sample.expected.answers[0]
        assert 0 < lp.p_answer <= 1
    assert totals.extra_requests == sum(r.logprobs.extra_requests for r in with_.records)
    assert totals.extra_prompt_tokens == sum(r.logprobs.extra_prompt_tokens for r in with_.records)


@pytest.mark.skipif(smollm2_gguf() is None, reason=SKIP_REASON)
def test_chat_mode_measures_the_answer_after_the_generation_prompt(tmp_path: Path) -> None:
    # Two threads, whatever the machine's load: at one thread llama.cpp's continuation of a cached prefix differs
    # from a cold forced request by up to 0.19 nats here (one of 7 positions), at two within the tolerance
    # (docs/ENGINES.md, "Threads on a shared machine").
    with EmbeddedEngine(smollm2_gguf(), n_ctx=2048, threads=2) as engine:
        done = ctxprobe.run(
            endpoints=[engine.base_url],
            mode="chat",
            family="niah",
            lengths="1k",
            depths="50",
            samples=1,
            quiet=True,
            no_report=True,
            allow_errors=True,
            results_dir=str(tmp_path),
        )
        (record,) = load_run(done.run_dir).records
        lp = record.logprobs
        assert isinstance(lp, AnswerLogprobs), record.logprobs_detail
        assert lp.gold == record.sample.expected.answers[0]  # the assistant's reply itself: no leading space
        context = _chat_context(engine.base_url, record.sample, lp.gold)
        assert len(context) == record.response.prompt_tokens  # the conversation as the server served it

        async def go() -> list[float]:
            async with EndpointClient(engine.endpoint_config(mode="chat")) as client:
                return await forced_everywhere(client, context, lp.token_ids)

        assert lp.logprobs == pytest.approx(asyncio.run(go()), abs=TOLERANCE)


def _chat_context(url: str, sample: Sample, gold: str) -> list[int]:
    """The conversation's token ids as the server renders it, its prompt rebuilt from the recipe."""
    rebuilt = build_sample(sample.recipe, make_counter(f"server:{url}"))
    assert rebuilt.prompt_sha256 == sample.prompt_sha256
    messages = rebuilt.messages or [{"role": "user", "content": rebuilt.prompt}]
    context, _ = adapter("llama-server").answer_tokens(
        EndpointCalls(url), prompt=rebuilt.prompt, gold=gold, messages=messages, model=None
    )
    return context
