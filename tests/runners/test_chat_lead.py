"""A counter that counts offline gets the chat template's size from the server that applies it, so a
chat prompt is planned at the length the server counts; a rebuild offline takes the size its recipe
recorded. (The real engine's ChatML fallback on Gemma: tests/e2e/test_chat_instruct_e2e.py.)"""

from __future__ import annotations

import pytest
from fake_engine import CHAT_TEMPLATE_TOKENS, FakeEngine

from ctxprobe.runners.chat_lead import ChatLeadCounter, with_chat_lead
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import EstimateCounter, count

FIELDS = dict(
    family="niah", params={"variant": "single"}, haystack="noise", context_tokens=2048, depth=50.0, seed=1, mode="chat"
)


def test_an_offline_counter_is_given_the_servers_chat_template() -> None:
    offline = EstimateCounter(1.0)
    with FakeEngine("llama-server") as engine:
        counter = with_chat_lead(offline, engine.url, "llama-server")
        assert isinstance(counter, ChatLeadCounter)
        assert counter.count_many(["a b c", "abc"]) == offline.count_many(["a b c", "abc"])
        assert (counter.spec, counter.bos_tokens, counter.approximate) == (offline.spec, 0, True)
        builder = PromptBuilder(counter)
        assert builder.lead_tokens("chat") == CHAT_TEMPLATE_TOKENS
        assert builder.lead_tokens("completions") == 0
        sample = builder.build(builder.recipe(**FIELDS))
        asked = len([r for r in engine.requests if r.path == "/v1/chat/completions/input_tokens"])
    assert asked == 1  # measured once
    assert sample.recipe.tokenizer_identity == ("estimate:1", CHAT_TEMPLATE_TOKENS)
    assert sample.planned_tokens == count(offline, sample.prompt) + CHAT_TEMPLATE_TOKENS
    # offline again, without the server: the recipe's recorded template size rebuilds the same bytes
    bare = PromptBuilder(EstimateCounter(1.0))
    rebuilt = bare.build(sample.recipe)
    assert rebuilt.prompt == sample.prompt and rebuilt.planned_tokens == sample.planned_tokens
    assert bare.recipe_tokenizer("chat") == ("estimate:1", None)  # the size is the recipe's: the builder's own is kept


def test_a_counter_that_measures_the_template_itself_and_an_unknown_engine_are_left_alone() -> None:
    server = ServerTokenizer("http://127.0.0.1:9", "llama-server")
    assert with_chat_lead(server, "http://127.0.0.1:9", "llama-server") is server
    offline = EstimateCounter(1.0)
    assert with_chat_lead(offline, "http://127.0.0.1:9", "unknown") is offline


def test_an_engine_without_a_template_count_keeps_the_bos_lead() -> None:
    with FakeEngine("llama-cpp-python") as engine:
        builder = PromptBuilder(with_chat_lead(EstimateCounter(1.0), engine.url, "llama-cpp-python"))
        assert builder.lead_tokens("chat") == 0 and builder.recipe_tokenizer("chat") == ("estimate:1", None)


def test_a_recorded_template_size_is_taken_only_for_the_counters_own_tokenizer() -> None:
    recipe = PromptBuilder(EstimateCounter(1.0)).recipe(**FIELDS)
    other = recipe.model_copy(update={"tokenizer": "estimate:2", "chat_template_tokens": 23})
    with pytest.raises(UserError, match="counted with"):
        PromptBuilder(EstimateCounter(1.0)).build(other)
