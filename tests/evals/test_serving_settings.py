"""The run's options reach the client and the embedded engine as given: the client settings by their own
names (no renaming on the way), the engine settings as one object, its context sized to the suite only
where the user left it open."""

from __future__ import annotations

from typing import Any

import pytest

from ctxprobe.evals.run.send.options import EMBEDDED_FIELDS, EndpointOptions
from ctxprobe.evals.run.send.serving import serving
from ctxprobe.runners import launcher
from ctxprobe.runners.settings import ClientSettings, EngineSettings
from ctxprobe.tasks.suite import Suite
from tests.runners.fake_engine import FakeEngine


def suite() -> Suite:
    return Suite.model_validate(
        {"name": "s", "lengths": ["1k", "3k"], "depths": "50", "samples": 1, "tasks": [{"family": "niah"}]}
    )


def test_the_options_are_made_of_the_runners_settings() -> None:
    for settings in (ClientSettings, EngineSettings):
        for name, field in settings.model_fields.items():
            mine = EndpointOptions.flat_fields()[name]
            assert (mine.default, mine.description, mine.metadata) == (field.default, field.description, field.metadata)
    assert {"model_file", "n_ctx", "parallel", "kv_cache_type", "swa_cache", "threads"} == EMBEDDED_FIELDS


def test_a_remote_endpoint_gets_the_client_settings_unchanged() -> None:
    with FakeEngine("vllm") as engine:
        opts = EndpointOptions(
            endpoints=[engine.url], timeout=9.0, timeout_per_1k=0.25, retries=1, token_counter="estimate"
        )
        with serving(opts, suite()) as served:
            config = served.config
    assert (config.timeout, config.timeout_per_1k, config.retries, config.api_key_env) == (
        9.0,
        0.25,
        1,
        "OPENAI_API_KEY",
    )
    # the model the probe found: no client lists /v1/models again
    assert (config.mode, config.concurrency, config.model) == ("chat", 4, "fake-model")


class _Started(Exception):
    pass


@pytest.mark.parametrize(("n_ctx", "expected"), [(None, 3072 + 512), (2048, 2048)])  # 3k + answer room, on 256s
def test_the_embedded_engine_gets_the_engine_settings(
    monkeypatch: pytest.MonkeyPatch, n_ctx: int | None, expected: int
) -> None:
    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, model_file: str | None, *, settings: EngineSettings) -> None:
            seen.update(model_file=model_file, settings=settings)

        def __enter__(self) -> None:
            raise _Started

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(launcher, "EmbeddedEngine", Recorder)
    opts = EndpointOptions(n_ctx=n_ctx, kv_cache_type="q8_0", swa_cache="window", threads=3, token_counter="estimate")
    with pytest.raises(_Started), serving(opts, suite()):
        pass
    assert seen["model_file"] is None
    given = seen["settings"]  # the launcher's settings as given (the engine reads its `EngineSettings` fields)
    assert isinstance(given, EngineSettings)
    assert (
        given.model_dump(include=set(EngineSettings.model_fields))
        == EngineSettings(n_ctx=expected, kv_cache_type="q8_0", swa_cache="window", threads=3).model_dump()
    )
