"""`limit` on the embedded engine sizes the server from the model (its trained context) or --max-length,
never from ctxprobe's own default; an endpoint or a given --n-ctx is left as it is."""

from __future__ import annotations

import pytest

from ctxprobe.evals.limit.api import embedded_context
from ctxprobe.evals.limit.options import LimitOptions
from ctxprobe.runners.settings import VllmSettings
from ctxprobe.tasks.gguf_vocab import read_metadata, trained_context
from ctxprobe.tasks.token_counter import packaged_gguf
from tests.instruct_model import SKIP_REASON, smollm2_gguf


def test_the_packaged_model_is_started_at_its_trained_context() -> None:
    meta = read_metadata(packaged_gguf())
    trained = meta[f"{meta['general.architecture']}.context_length"]
    assert trained_context(packaged_gguf()) == trained == 32768
    assert embedded_context(LimitOptions(), None).launcher.n_ctx == trained


def test_a_users_gguf_by_its_own_metadata() -> None:
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip(SKIP_REASON)
    assert (
        embedded_context(LimitOptions(model_file=str(gguf)), None).launcher.n_ctx == 8192
    )  # SmolLM2: llama.context_length


def test_max_length_an_endpoint_and_a_given_n_ctx_win() -> None:
    assert embedded_context(LimitOptions(), 8192).launcher.n_ctx == 8192
    assert embedded_context(LimitOptions(n_ctx=4096), 8192).launcher.n_ctx == 4096
    assert embedded_context(LimitOptions(endpoints=["http://127.0.0.1:1"]), None).launcher.n_ctx is None
    assert embedded_context(LimitOptions(engine="vllm", model_dir="m"), None).launcher == VllmSettings(model_dir="m")
