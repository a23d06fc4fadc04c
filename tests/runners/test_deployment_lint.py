"""Each deployment-lint rule fires on the facts that make its case, names each fact and where it was read, and
stays silent on the facts next to its case (published configs in fixtures/model_configs, the packaged GGUF)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxprobe.runners.deployment_lint import Deployment, lint_deployment, scaled_positions
from ctxprobe.runners.engine_facts import EngineFacts
from ctxprobe.runners.engines.base import Stated
from ctxprobe.runners.model_facts import ModelFacts, model_facts_from_config, read_model_facts
from ctxprobe.tasks.token_counter import packaged_gguf

CONFIGS = Path(__file__).parent / "fixtures" / "model_configs"
MODELS = "GET /v1/models max_model_len"


def config(name: str, **changes: Any) -> ModelFacts:
    return model_facts_from_config({**json.loads((CONFIGS / f"{name}.json").read_text()), **changes}, f"{name}.json")


def vllm(served: int) -> EngineFacts:
    return EngineFacts(engine="vllm", model="m", served_context=Stated(served, MODELS))


def rules(deployment: Deployment) -> list[str]:
    return [line.rule for line in lint_deployment(deployment)]


def test_served_above_positions_without_rope_scaling_names_both_facts() -> None:
    ling = model_facts_from_config({"max_position_embeddings": 262144, "rope_scaling": None}, "/m/ling/config.json")
    [line] = lint_deployment(Deployment(vllm(1_048_576), ling))
    assert line.rule == "served_over_positions"
    assert "1,048,576 (GET /v1/models max_model_len)" in line.message
    assert "262,144 positions (config.json (/m/ling/config.json) max_position_embeddings)" in line.message
    assert "no rope scaling" in line.message
    assert line.sources == [MODELS, "config.json (/m/ling/config.json) max_position_embeddings"]
    assert rules(Deployment(vllm(262_144), ling)) == []  # at the positions: nothing


def test_served_above_factor_times_original() -> None:
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    qwen = config("qwen2_5_7b_instruct", rope_scaling=yarn)
    assert scaled_positions(qwen).value == 131072  # type: ignore[union-attr]
    assert rules(Deployment(vllm(131_072), qwen)) == []
    line, window = lint_deployment(Deployment(vllm(262_144), qwen))  # and past Qwen's declared 131,072 window
    assert (line.rule, window.rule) == ("served_over_positions", "sliding_window_unused")
    assert "scaled range 131,072" in line.message
    assert "factor 4 × original 32,768" in line.message


def test_llama3_scaling_states_its_scaled_length_as_its_positions() -> None:
    llama = config("llama_3_1_8b_instruct")
    assert scaled_positions(llama).value == 131072  # type: ignore[union-attr]  # not 8 × 131072
    assert rules(Deployment(vllm(131_072), llama)) == []
    assert rules(Deployment(vllm(200_000), llama)) == ["served_over_positions"]


def test_rope_scaling_without_a_type_scales_nothing() -> None:
    qwen = config("qwen2_5_7b_instruct", rope_scaling={"factor": 4.0, "original_max_position_embeddings": 32768})
    found = lint_deployment(Deployment(vllm(131_072), qwen))
    assert [line.rule for line in found] == ["served_over_positions", "rope_without_type"]
    assert "factor 4 is not applied" in found[1].message and "rope_scaling" in found[1].sources[0]


def test_keys_the_rope_type_does_not_read() -> None:
    odd = {"rope_type": "linear", "factor": 4.0, "original_max_position_embeddings": 32768, "finetuned": True}
    [line] = lint_deployment(Deployment(vllm(32768), config("qwen2_5_7b_instruct", rope_scaling=odd)))
    assert line.rule == "rope_keys_unread"
    assert "`linear` does not read: original_max_position_embeddings, finetuned" in line.message
    legacy = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}  # Qwen's card: read
    assert rules(Deployment(vllm(131_072), config("qwen2_5_7b_instruct", rope_scaling=legacy))) == []


def test_yarn_factor_without_its_original_length() -> None:
    qwen = config("qwen2_5_7b_instruct", rope_scaling={"rope_type": "yarn", "factor": 4.0})
    found = lint_deployment(Deployment(vllm(131_072), qwen))
    assert [line.rule for line in found] == ["rope_factor_without_original"]
    assert "max_position_embeddings (32,768)" in found[0].message
    assert scaled_positions(qwen).value == 131072  # type: ignore[union-attr]  # what engines then derive


def test_a_declared_window_on_full_attention_layers_when_it_is_shorter_than_what_runs() -> None:
    qwen = config("qwen2_5_7b_instruct", sliding_window=4096)
    [line] = lint_deployment(Deployment(vllm(32768), qwen))
    assert line.rule == "sliding_window_unused" and "sliding_window 4,096" in line.message
    assert "use_sliding_window false" in line.message and "vLLM #49795" in line.message
    # Qwen2.5 as published: a 131,072 window over 32,768 served cuts nothing, applied or not
    assert rules(Deployment(vllm(32768), config("qwen2_5_7b_instruct"))) == []
    assert rules(Deployment(vllm(32768), config("qwen2_5_7b_instruct"), longest_length=200_000)) == [
        "sliding_window_unused",
        "trained_below_suite",
    ]


def test_a_model_with_sliding_layers_is_not_linted_for_its_window() -> None:
    assert rules(Deployment(vllm(32768), config("gemma_3_270m"))) == []


def llama_server(per_slot: int, slots: int = 1, shift: bool | None = None) -> EngineFacts:
    return EngineFacts(
        engine="llama-server",
        served_context=Stated(per_slot, "GET /props n_ctx (per slot)"),
        slots=Stated(slots, "GET /props total_slots"),
        context_shift=Stated(shift, "launcher: --ctx-shift") if shift is not None else None,
    )


def test_llama_server_slot_below_the_longest_prompt_says_how_slots_divide_it() -> None:
    [line] = lint_deployment(Deployment(llama_server(4096, slots=2), longest_prompt=6000))
    assert line.rule == "slot_context_below_prompt"
    assert "4,096 (GET /props n_ctx (per slot))" in line.message and "6,000" in line.message
    assert "divided among 2 slots" in line.message
    assert rules(Deployment(llama_server(8192, slots=2), longest_prompt=6000)) == []
    assert rules(Deployment(vllm(4096), longest_prompt=6000)) == []  # vLLM's context is not per slot


def test_context_shift_on_is_named_off_is_not() -> None:
    assert rules(Deployment(llama_server(8192, shift=True))) == ["context_shift_on"]
    assert rules(Deployment(llama_server(8192, shift=False))) == []


def test_trained_context_below_the_suite_from_the_config_else_from_the_engine() -> None:
    assert rules(Deployment(vllm(32768), config("gemma_3_270m"), longest_length=65536)) == ["trained_below_suite"]
    stated = EngineFacts(engine="llama-server", trained_context=Stated(32768, "GET /v1/models meta.n_ctx_train"))
    [line] = lint_deployment(Deployment(stated, longest_length=65536))
    assert "65,536" in line.message and "32,768 (GET /v1/models meta.n_ctx_train)" in line.message
    assert rules(Deployment(stated, longest_length=32768)) == []


def test_the_embedded_engines_own_model_has_no_lint() -> None:
    gemma = read_model_facts(packaged_gguf())
    engine = EngineFacts(
        engine="llama-server",
        served_context=Stated(4352, "GET /props n_ctx (per slot)"),
        slots=Stated(1, "GET /props total_slots"),
        trained_context=Stated(32768, "GET /v1/models meta.n_ctx_train"),
        context_shift=Stated(False, "embedded engine"),
    )
    assert lint_deployment(Deployment(engine, gemma, longest_prompt=4200, longest_length=4096)) == []
