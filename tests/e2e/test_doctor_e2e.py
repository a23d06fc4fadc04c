"""`ctxprobe doctor` on the real embedded engine (llama-server from the xllamacpp wheel, Gemma 3 270M base)."""

from __future__ import annotations

import pytest

import ctxprobe
from ctxprobe.runners.launcher import EmbeddedEngine

pytestmark = pytest.mark.engine


def test_doctor_on_the_real_engine(embedded_engine: EmbeddedEngine) -> None:
    report = ctxprobe.doctor(embedded_engine.base_url)
    found = {c.name: c for c in report.checks}
    assert report.engine.engine == "llama-server"
    assert found["context length"].status == "ok" and report.engine.context_length == 8192
    assert found["tokenize"].status == "ok"
    assert found["completions + cached tokens"].status == "ok"  # llama-server always reports cached tokens
    assert "cached" in found["completions + cached tokens"].found
    # the packaged model is a base model with no chat template: chat does not answer the word it is asked for
    assert report.recommended_mode == "completions", found["chat"].found
    # its answer style, measured on one short needle prompt in the mode that fits
    assert [style.mode for style in report.answer_styles] == ["completions"], found["answer style (completions)"]
    assert "answer style (completions)" in found


def test_the_deployment_lint_names_nothing_on_the_embedded_engines_own_model(embedded_engine: EmbeddedEngine) -> None:
    """The facts are read (the GGUF the engine states it loaded, its slot and trained context), and none is a
    finding: 8,192 per slot within Gemma's 32,768 trained positions, a window over layers that slide."""
    from ctxprobe.runners.engine_facts import read_engine_facts
    from ctxprobe.runners.model_facts import served_model_facts

    report = ctxprobe.doctor(embedded_engine.base_url, context_check=False, max_length=8000)
    assert report.lint == []
    facts = read_engine_facts(embedded_engine.base_url)
    model = served_model_facts(None, facts.model_path)
    assert facts.trained_context and facts.trained_context.value == 32768
    assert model is not None and model.positions and model.positions.value == 32768  # the GGUF was read
    assert model.sliding_window and model.sliding_window.value == 512
    # past the trained context the same deployment is named, so the silence above is not for want of facts
    from ctxprobe.evals.doctor.lint import endpoint_lint
    from ctxprobe.runners.retry import RetryPolicy
    from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV, ClientSettings

    lines = endpoint_lint(
        embedded_engine.base_url,
        config=None,
        max_length=40000,
        model=None,
        api_key_env=DEFAULT_API_KEY_ENV,
        policy=RetryPolicy.of(ClientSettings()),
    )
    assert [line.rule for line in lines] == ["slot_context_below_prompt", "trained_below_suite"]
