"""What an endpoint and a model's files state about a deployment, each fact with where it was read: read from
real captured bodies (llama-server, vLLM), SGLang's body shaped from its source, published model configs and
the packaged Gemma GGUF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from replay_server import captured, replaying

from ctxprobe.runners.engine_facts import read_engine_facts
from ctxprobe.runners.engines import adapter
from ctxprobe.runners.model_facts import model_facts_from_config, model_facts_from_gguf, read_model_facts
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import packaged_gguf

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = FIXTURES / "model_configs"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_llama_server_states_slot_context_slots_trained_context_and_model_file() -> None:
    with replaying(FIXTURES / "llama_server") as server:
        facts = read_engine_facts(server.url)
    assert (facts.engine, facts.model) == ("llama-server", "gemma-3-270m")
    assert facts.served_context and facts.served_context.value == 2048
    assert "default_generation_settings.n_ctx" in facts.served_context.source
    assert facts.slots and (facts.slots.value, facts.slots.source) == (2, "GET /props total_slots")
    assert facts.trained_context and facts.trained_context.value == 32768
    assert facts.trained_context.source == "GET /v1/models meta.n_ctx_train"
    assert facts.model_path and facts.model_path.value == "/models/gemma-3-270m-q4_k_m.gguf"
    assert facts.context_shift is None  # llama-server does not state it


def test_vllm_states_max_model_len_and_model_folder() -> None:
    with replaying(FIXTURES / "vllm" / "plain") as server:
        facts = read_engine_facts(server.url)
    assert facts.engine == "vllm"
    assert facts.served_context and facts.served_context.value == 2048
    assert facts.served_context.source == "GET /v1/models max_model_len"
    assert facts.model_path and (facts.model_path.value, facts.model_path.source) == (
        "/models/smollm2-135m",
        "GET /v1/models root",
    )
    assert facts.slots is None and facts.trained_context is None


def test_sglang_states_model_path_and_its_config_override() -> None:
    body = captured(FIXTURES / "sglang", "server_info_from_source")["body"]
    with FakeEngine(
        "sglang", context_length=131072, routes={("GET", "/server_info"): lambda engine, _: (200, body)}
    ) as engine:
        facts = read_engine_facts(engine.url)
    assert facts.engine == "sglang" and facts.served_context and facts.served_context.value == 131072
    assert facts.model_path and facts.model_path.value == "/models/qwen2.5-7b-instruct"
    assert facts.config_overrides and facts.config_overrides.source == "GET /server_info json_model_override_args"
    assert facts.config_overrides.value["rope_scaling"]["rope_type"] == "yarn"


def test_an_unknown_server_states_nothing() -> None:
    with FakeEngine("llama-cpp-python") as engine:
        facts = read_engine_facts(engine.url)
    assert facts.served_context is None and facts.model_path is None


def test_each_fact_an_adapter_states_is_a_field_of_the_facts() -> None:
    from dataclasses import fields

    from ctxprobe.runners.engine_facts import EngineFacts

    names = {f.name for f in fields(EngineFacts)}
    stated = adapter("vllm").deployment_facts({"max_model_len": 10, "root": "/m"}, {})
    assert set(stated) == {"served_context", "model_path"} <= names
    props = captured(FIXTURES / "llama_server", "props")["body"]
    models = captured(FIXTURES / "llama_server", "models")["body"]["data"][0]
    assert set(adapter("llama-server").deployment_facts(models, props)) <= names


def test_qwen_config_declares_a_window_while_no_layer_slides() -> None:
    facts = model_facts_from_config(config("qwen2_5_7b_instruct"), "qwen/config.json")
    assert facts.positions and facts.positions.value == 32768
    assert facts.positions.source == "config.json (qwen/config.json) max_position_embeddings"
    assert facts.rope is None  # rope_scaling null
    assert facts.sliding_window and facts.sliding_window.value == 131072
    assert facts.sliding_layers and facts.sliding_layers.value == 0
    assert "use_sliding_window false" in facts.sliding_layers.source


def test_llama3_rope_scaling_is_read_with_its_original_length() -> None:
    facts = model_facts_from_config(config("llama_3_1_8b_instruct"), "llama/config.json")
    assert facts.rope is not None
    rope = facts.rope.value
    assert (rope.kind, rope.factor, rope.original, rope.field) == ("llama3", 8.0, 8192, "rope_scaling")
    assert not rope.legacy_type and rope.scales
    assert facts.sliding_window is None and facts.sliding_layers is None  # not stated per layer


def test_transformers_5_rope_parameters_per_layer_type_without_scaling_is_no_scaling() -> None:
    facts = model_facts_from_config(config("gemma_3_270m"), "gemma/config.json")
    assert facts.rope is None
    assert facts.sliding_layers and facts.sliding_layers.value == 15  # 5 of every 6 of 18 layers
    assert facts.positions and facts.positions.value == 32768


def test_legacy_type_key_and_a_top_level_original_length() -> None:
    facts = model_facts_from_config(
        {
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_scaling": {"type": "yarn", "factor": 32.0},
        },
        "phi/config.json",
    )
    assert facts.rope is not None
    assert (facts.rope.value.kind, facts.rope.value.original, facts.rope.value.legacy_type) == ("yarn", 4096, True)


def test_per_layer_use_sliding_window_with_max_window_layers() -> None:
    facts = model_facts_from_config(
        {"num_hidden_layers": 28, "use_sliding_window": True, "max_window_layers": 21, "sliding_window": 4096}, "c.json"
    )
    assert facts.sliding_layers and facts.sliding_layers.value == 7


def test_a_multimodal_config_reads_its_language_model() -> None:
    facts = model_facts_from_config(
        {
            "model_type": "gemma3",
            "text_config": {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}},
        },
        "c.json",
    )
    assert facts.positions and facts.positions.value == 131072
    assert facts.rope and facts.rope.value.kind == "linear"


def test_the_packaged_gemma_gguf_states_its_trained_context_and_window_but_not_its_layer_pattern() -> None:
    facts = read_model_facts(packaged_gguf())
    assert facts.model_type == "gemma3" and facts.positions and facts.positions.value == 32768
    assert facts.positions.source.endswith("gemma3.context_length")
    assert facts.sliding_window and facts.sliding_window.value == 512
    assert facts.sliding_layers is None and facts.rope is None


def test_gguf_rope_scaling_and_layer_pattern() -> None:
    meta = {
        "general.architecture": "qwen2",
        "qwen2.context_length": 131072,
        "qwen2.block_count": 4,
        "qwen2.rope.scaling.type": "yarn",
        "qwen2.rope.scaling.factor": 4.0,
        "qwen2.rope.scaling.original_context_length": 32768,
        "qwen2.attention.sliding_window": 4096,
        "qwen2.attention.sliding_window_pattern": [0, 0, 0, 0],
    }
    facts = model_facts_from_gguf(meta, "q.gguf")
    assert facts.rope and (facts.rope.value.kind, facts.rope.value.factor, facts.rope.value.original) == (
        "yarn",
        4.0,
        32768,
    )
    assert facts.sliding_layers and facts.sliding_layers.value == 0


def test_bad_config_paths_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        read_model_facts(tmp_path / "missing.json")
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(UserError, match="holds a JSON list, not an object"):
        read_model_facts(tmp_path)  # a folder: its config.json
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(UserError, match="is not valid JSON"):
        read_model_facts(tmp_path / "config.json")
