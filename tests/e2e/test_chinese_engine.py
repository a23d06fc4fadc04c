"""Chinese prompts on the embedded engine: whole `lang: zh` prompts on the `prose:zh` haystack, built with the
offline GGUF counter, are the token ids llama-server's /tokenize gives, so their planned length is the length
the engine serves, at every question position."""

from __future__ import annotations

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.build import builder_for, token_counter

pytestmark = pytest.mark.engine


@pytest.mark.parametrize(
    "family,params",
    [
        ("niah", {}),
        ("niah", {"variant": "multikey", "question_position": "start"}),
        ("recall", {"kind": "uuid"}),
        ("multihop", {"kind": "kinship"}),
    ],
)
def test_chinese_prompts_are_counted_as_the_engine_counts_them(
    embedded_engine: EmbeddedEngine, family: str, params: dict[str, object]
) -> None:
    server = ServerTokenizer(embedded_engine.base_url, "llama-server")
    builder = builder_for(token_counter("local:gemma3-270m"))
    for length, depth in ((1024, 0.0), (4096, 60.0)):
        recipe = builder.recipe(
            family=family,
            params={**params, "lang": "zh"},
            haystack="prose:zh",
            context_tokens=length,
            depth=depth,
            seed=2,
        )
        sample = builder.build(recipe)
        ids = server.token_ids(sample.prompt)
        assert ids == builder.counter.token_ids(sample.prompt)  # type: ignore[attr-defined]
        assert len(ids) + server.bos_tokens == sample.planned_tokens
