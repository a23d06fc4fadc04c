"""The engine adapters: one per engine, found by name, each holding its own facts (docs/ENGINES.md)."""

from __future__ import annotations

import pytest

from ctxprobe.runners.engines import adapter, adapters, known_engines
from ctxprobe.runners.metrics import parse_prometheus, scrape_metrics
from ctxprobe.tasks.errors import UserError
from tests.runners.fake_engine import FakeEngine


def test_one_adapter_per_engine_by_name() -> None:
    assert set(known_engines()) == {"vllm", "sglang", "llama-server", "llama-cpp-python"}
    assert [a.name for a in adapters()] == list(known_engines())
    assert {adapter(n).owned_by for n in known_engines()} == {"vllm", "sglang", "llamacpp", "me"}


def test_an_unknown_engine_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match="unknown engine 'tgi'; known: llama-server, sglang, llama-cpp-python, vllm"):
        adapter("tgi")


@pytest.mark.parametrize(
    ("engine", "names"),
    [
        ("vllm", {"vllm:prefix_cache_hits_total", "vllm:prompt_tokens_cached_total", "vllm:kv_cache_usage_perc"}),
        ("sglang", {"sglang:cached_tokens_total", "sglang:prompt_tokens_total", "sglang:cache_hit_rate"}),
        ("llama-server", {"llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens_cached_total"}),
    ],
)
def test_metric_names_are_the_engines_own(engine: str, names: set[str]) -> None:
    assert names <= set(adapter(engine).metrics.values())
    prefix = next(iter(names)).split(":")[0] + ":"
    assert all(n.startswith(prefix) for n in adapter(engine).metrics.values())
    assert adapter("llama-cpp-python").metrics == {}


def test_prometheus_text_sums_label_sets_and_skips_comments() -> None:
    text = '# HELP x help\n# TYPE a counter\na{m="1"} 2.5\na{m="2"} 1.5\nb 7\nc{le="+Inf"} NaN\nbroken line\n'
    assert parse_prometheus(text) == {"a": 4.0, "b": 7.0}


@pytest.mark.parametrize("flavor", ["vllm", "sglang", "llama-server"])
def test_scraped_metrics_grow_with_completions(flavor: str) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        before = scrape_metrics(engine.url, flavor)
        engine.requests.append(engine.requests[-1].__class__("/v1/completions", {}, {}))
        after = scrape_metrics(engine.url, flavor)
    assert before is not None and after is not None
    assert before["cached_prompt_tokens"] == 0 and after["cached_prompt_tokens"] == 40.0
