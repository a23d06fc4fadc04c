"""The API key goes everywhere the endpoint is called — probe, tokenize, metrics, completions — always
from the variable `api_key_env` names, never from OPENAI_API_KEY when another variable is configured.
A fake engine that requires the key records what each call carried."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fake_engine import FLAVORS, FakeEngine

from ctxprobe.evals.cli.main import main
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig
from ctxprobe.runners.http_json import api_key
from ctxprobe.runners.metrics import scrape_metrics
from ctxprobe.runners.probe import probe_engine
from ctxprobe.runners.server_tokenizer import ServerTokenizer, server_token_counter
from ctxprobe.tasks.errors import UserError

KEY = "k-engine-123"


@pytest.fixture
def keyed_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MY_ENGINE_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-service")  # must never be sent to this endpoint
    return "MY_ENGINE_KEY"


def sent_keys(engine: FakeEngine) -> set[str | None]:
    return {r.headers.get("authorization") for r in engine.requests}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_every_call_carries_the_configured_key(flavor: str, keyed_env: str) -> None:
    with FakeEngine(flavor, api_key=KEY) as engine:  # type: ignore[arg-type]
        info = probe_engine(engine.url, api_key_env=keyed_env)
        tokenizer = server_token_counter(engine.url, api_key_env=keyed_env)
        assert tokenizer.count_many(["a b", "c d e"]) == [2, 3] and tokenizer.token_ids("a b")
        tokenizer.chat_overhead()
        metrics = scrape_metrics(engine.url, info.engine, api_key_env=keyed_env)

        async def complete() -> str:
            config = EndpointConfig(base_urls=(engine.url,), api_key_env=keyed_env, retries=0)
            async with EndpointClient(config) as client:
                return (await client.send("one two", max_tokens=8, planned_tokens=3, seed=1)).text

        assert asyncio.run(complete())
        paths = {r.path for r in engine.requests}
        assert sent_keys(engine) == {f"Bearer {KEY}"}
    assert info.engine == flavor
    assert {"/v1/models", "/v1/completions"} <= paths
    assert (metrics is None) == (flavor == "llama-cpp-python")
    if metrics is not None:
        assert "/metrics" in paths


@pytest.mark.parametrize("flavor", FLAVORS)
def test_a_refused_key_is_one_line_naming_the_variable(
    flavor: str, keyed_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(keyed_env, "wrong")
    with FakeEngine(flavor, api_key=KEY) as engine:  # type: ignore[arg-type]
        with pytest.raises(UserError, match=f"refused the API key .*{keyed_env}") as caught:
            probe_engine(engine.url, api_key_env=keyed_env)
        with pytest.raises(UserError, match="refused the API key"):
            ServerTokenizer(engine.url, flavor, api_key_env=keyed_env).count("a")
    assert "\n" not in str(caught.value)


def test_the_dummy_key_only_when_the_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_ENGINE_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-service")
    assert api_key("MY_ENGINE_KEY") == "EMPTY"
    monkeypatch.setenv("MY_ENGINE_KEY", KEY)
    assert api_key("MY_ENGINE_KEY") == KEY


def test_ctxprobe_run_against_a_keyed_server(tmp_path: Path, keyed_env: str) -> None:
    with FakeEngine("sglang", api_key=KEY, context_length=8192, answer="The number is 1234567.") as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--api-key-env",
                keyed_env,
                "--token-counter",
                "server",
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "50",
                "--samples",
                "2",
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
        assert sent_keys(engine) == {f"Bearer {KEY}"}
        assert len(engine.completion_calls()) == 2
    assert code == 0
    manifest = json.loads((next(tmp_path.iterdir()) / "manifest.json").read_text())
    assert manifest["api_key_env"] == keyed_env and KEY not in json.dumps(manifest)
    assert manifest["token_counter"] == f"server:{engine.url}"  # `server` alone: the endpoint's own tokenizer


SECRET = "SeKrEt-planted-9f3a"


@pytest.mark.parametrize("raw", [f"{SECRET}\n", f"  {SECRET}\r\n", f"\t{SECRET} "])
def test_a_key_read_with_surrounding_white_space_is_sent_stripped(
    raw: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key from a secrets file ends in a newline: it is the key, and the run goes through with it."""
    monkeypatch.setenv("FILE_KEY", raw)
    with FakeEngine("vllm", api_key=SECRET) as engine:
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    engine.url,
                    "--api-key-env",
                    "FILE_KEY",
                    "--family",
                    "niah",
                    "--lengths",
                    "1k",
                    "--depths",
                    "50",
                    "--samples",
                    "1",
                    "--quiet",
                    "--no-report",
                    "--results-dir",
                    str(tmp_path),
                ]
            )
            == 0
        )
        assert sent_keys(engine) == {f"Bearer {SECRET}"}
    assert SECRET not in capsys.readouterr().err


@pytest.mark.parametrize(
    "raw, what",
    [
        (f"{SECRET[:6]}\n{SECRET[6:]}", "a control character"),
        (f"{SECRET}\x1b[0m", "a control character"),
        (f"{SECRET}\u00e9", "a non-ASCII character"),
        (f"{SECRET}\u2014x", "a non-ASCII character"),
    ],
)
@pytest.mark.parametrize("command", ["run", "doctor"])
def test_a_key_no_header_can_carry_is_refused_by_name_without_showing_it(
    raw: str,
    what: str,
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FILE_KEY", raw)
    with FakeEngine("vllm", api_key=SECRET) as engine:
        argv = (
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--samples",
                "1",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
            ]
            if command == "run"
            else ["doctor", engine.url]
        )
        assert main([*argv, "--api-key-env", "FILE_KEY"]) == 2
        assert not engine.completion_calls()
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert lines == [
        f"ctxprobe: error: the API key in $FILE_KEY holds {what}, which an HTTP header cannot carry; "
        "check the variable (the key is not shown)"
    ], lines
    assert SECRET[:6] not in out.out + out.err


def test_doctor_never_shows_the_credentials_of_the_url_it_was_given(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as engine:
        url = engine.url.replace("http://", f"http://user:{SECRET}@")
        assert main(["doctor", url, "--no-context-check"]) == 0
        assert main(["doctor", url, "--no-context-check", "--json"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"ctxprobe doctor {engine.url}") and SECRET not in out.out + out.err
