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
