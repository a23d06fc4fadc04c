"""The endpoint and engine settings are declared once (runners/settings.py): the client's config is made
of them, the embedded server's child reads back exactly the flags the launcher writes from them, and a
bad value is one line naming it."""

from __future__ import annotations

import pytest

from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.serve import parse_args
from ctxprobe.runners.settings import (
    DEFAULT_N_CTX,
    ClientSettings,
    EngineSettings,
    ServeSettings,
    checked,
    from_argv,
    to_argv,
)
from ctxprobe.tasks.errors import UserError


def test_the_client_config_defaults_are_the_settings_defaults() -> None:
    config = EndpointConfig(base_urls=("http://h:1",))
    assert (config.timeout, config.timeout_per_1k, config.retries) == (120.0, 2.0, 4)
    assert config.api_key_env == "OPENAI_API_KEY" and config.request_timeout_s(10_000) == 120.0 + 20.0


def test_the_users_client_settings_pass_unchanged_and_an_unnamed_model_leaves_the_servers() -> None:
    given = ClientSettings(timeout=7.5, timeout_per_1k=0.5, retries=1, api_key_env="MY_KEY")
    config = EndpointConfig.of(given, base_urls=("http://h:1",), model="served-name", concurrency=3)
    assert (config.timeout, config.timeout_per_1k, config.retries, config.api_key_env) == (7.5, 0.5, 1, "MY_KEY")
    assert (config.model, config.concurrency) == ("served-name", 3)
    named = EndpointConfig.of(ClientSettings(model="mine"), base_urls=("http://h:1",), model="served-name")
    assert named.model == "mine"


def test_the_serve_child_reads_back_what_the_launcher_writes() -> None:
    served = ServeSettings(
        model="/m.gguf",
        alias="a",
        port=4321,
        n_ctx=4096,
        parallel=3,
        kv_cache_type="q4_0",
        swa_cache="window",
        threads=2,
    )
    assert from_argv(ServeSettings, to_argv(served)) == served
    assert parse_args(to_argv(served)) == served
    bare = ServeSettings(model="/m.gguf", port=1)
    assert from_argv(ServeSettings, to_argv(bare)) == bare
    # one typed value: the settings model as JSON, never flags parsed back one by one
    assert to_argv(served) == ["--settings", served.model_dump_json()]
    with pytest.raises(UserError, match="n_ctx 8 is too small"):
        from_argv(ServeSettings, ["--settings", served.model_copy(update={"n_ctx": 8}).model_dump_json()])


def test_the_launcher_resolves_what_the_user_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxprobe.runners import launcher

    looks: list[int] = []
    monkeypatch.setattr(launcher, "threads_for_engine", lambda: looks.append(1) or 1)  # another process is busy
    engine = EmbeddedEngine(settings=EngineSettings(kv_cache_type="q8_0"))
    engine.model_path = "/m.gguf"  # type: ignore[assignment]
    child = parse_args(engine.command(9999)[3:])
    assert (child.n_ctx, child.parallel, child.kv_cache_type, child.threads) == (DEFAULT_N_CTX, 1, "q8_0", 1)
    monkeypatch.setattr(launcher, "threads_for_engine", lambda: None)  # every core idle: llama.cpp's own choice
    assert parse_args(engine.command(9999)[3:]).threads is None
    told = EmbeddedEngine(settings=EngineSettings(threads=2))
    told.model_path = "/m.gguf"  # type: ignore[assignment]
    assert parse_args(told.command(9999)[3:]).threads == 2 and looks == [1]  # the user's --threads: no look
    with pytest.raises(TypeError):
        EmbeddedEngine(settings=EngineSettings(), n_ctx=1024)


@pytest.mark.parametrize(
    ("model", "values", "message"),
    [
        (EngineSettings, {"n_ctx": 8}, "n_ctx 8 is too small: at least 16"),
        (EngineSettings, {"kv_cache_type": "q2"}, "unknown KV cache type 'q2'; known: 'f16', 'q8_0' or 'q4_0'"),
        (EngineSettings, {"swa_cache": "half"}, "unknown sliding-window cache 'half'"),
        (ClientSettings, {"timeout": 0}, "timeout 0 is too small: more than 0"),
        (ServeSettings, {"model": "m"}, "port: Field required"),
        (EngineSettings, {"n_cxt": 4}, "n_cxt: Extra inputs are not permitted"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(model: type, values: dict[str, object], message: str) -> None:
    with pytest.raises(UserError) as caught:
        checked(model, values)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
