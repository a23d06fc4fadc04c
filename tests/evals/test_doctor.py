"""`ctxprobe doctor` on the engines' shapes (fake servers from docs/ENGINES.md): what each exposes, and the
flag it names for what is missing. The real engine is checked in tests/e2e/test_doctor_e2e.py."""

from __future__ import annotations

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine


def statuses(report: ctxprobe.DoctorReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


@pytest.mark.parametrize(
    ("flavor", "cached", "metrics", "flag"),
    [
        ("vllm", "missing", "ok", "--enable-prompt-tokens-details"),
        ("sglang", "missing", "ok", "--enable-cache-report"),
        ("llama-server", "ok", "ok", None),
        ("llama-cpp-python", "missing", "missing", "never reports them"),
    ],
)
def test_each_engine_reports_what_it_exposes(flavor: str, cached: str, metrics: str, flag: str | None) -> None:
    with FakeEngine(flavor, context_length=8192, answer="ready") as engine:
        report = ctxprobe.doctor(engine.url)
    found = statuses(report)
    assert report.engine.engine == flavor
    assert found["completions + cached tokens"] == cached and found["metrics"] == metrics
    assert found["tokenize"] == "ok" and found["chat"] == "ok" and report.recommended_mode == "chat"
    assert found["context length"] == ("missing" if flavor == "llama-cpp-python" else "ok")
    advice = " ".join(c.advice for c in report.checks if c.status != "ok")
    if flag:
        assert flag in advice


def test_a_base_model_that_rambles_in_chat_is_sent_to_completions() -> None:
    with FakeEngine(
        "vllm", context_length=8192, answer="Reply with the single word: the weather today is", follows_chat=False
    ) as engine:
        report = ctxprobe.doctor(engine.url)
    assert statuses(report)["chat"] == "missing" and report.recommended_mode == "completions"


def test_doctor_uses_the_configured_key_and_fails_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unreachable" in err[0]


def test_counts_that_add_up_and_a_context_that_holds_are_ok() -> None:
    with FakeEngine("vllm", context_length=16384, answer="ready") as engine:
        report = ctxprobe.doctor(engine.url)
        longest = max(engine.prompt_tokens(r.body) for r in engine.completion_calls())
    found = {c.name: c for c in report.checks}
    assert found["token counts"].status == "ok" and "exact prompt lengths" in found["token counts"].found
    assert found["context accepted"].status == "ok"
    assert 16384 - 16 - 20 <= longest <= 16384 - 16  # one prompt within a filler sentence of the stated context


def test_a_tokenizer_that_answers_at_random_is_not_called_exact() -> None:
    with FakeEngine("vllm", context_length=8192, answer="ready", tokenize_noise=3) as engine:
        report = ctxprobe.doctor(engine.url, context_check=False)
    found = {c.name: c for c in report.checks}
    assert found["token counts"].status == "failed" and "do not add up" in found["token counts"].found
    assert "exact" not in " ".join(c.found for c in report.checks)
    assert "context accepted" not in found


def test_a_usage_that_disagrees_with_the_tokenizer_fails_the_count_check() -> None:
    with FakeEngine("vllm", context_length=8192, answer="ready", usage_scale=1.02) as engine:
        report = ctxprobe.doctor(engine.url, context_check=False)
    check = next(c for c in report.checks if c.name == "token counts")
    assert check.status == "failed" and "was served as" in check.found


def test_a_stated_context_the_server_rejects_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=65536, accepts_up_to=8192, answer="ready") as engine:
        assert main(["doctor", engine.url]) == 1  # a failed check: exit 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "context accepted" in x)
    assert "failed" in line and "65,536" in line and "rejected as too long" in line and "8,192" in line
    assert "context length" in out and "ok" in out


@pytest.mark.parametrize("flavor", ["vllm", "sglang"])
def test_a_model_the_endpoint_does_not_serve_is_named_and_fails(
    flavor: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(flavor, model="served-model") as engine:
        assert main(["doctor", "--model", "nosuch", engine.url]) == 1
        sent = [r.path for r in engine.requests]
    out = capsys.readouterr().out
    assert "'nosuch' is not served" in out and "served-model" in out and "--model served-model" in out
    assert "--mode " not in out and "mode:" not in out  # never blamed on the mode
    assert not [p for p in sent if "completions" in p]  # nothing else is asked under a name it refuses


def test_the_model_asked_for_is_the_one_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", model="served-model", answer="ready") as engine:
        assert main(["doctor", "--model", "served-model", "--no-context-check", engine.url]) == 0
        asked = {r.body.get("model") for r in engine.requests if r.path.startswith("/v1/") and r.body}
    assert asked == {"served-model"}
    assert "model served-model" in capsys.readouterr().out


def test_when_neither_mode_answers_the_advice_names_neither(
    capsys: pytest.CaptureFixture[str], quick_backoff: None
) -> None:
    refuse = lambda engine, body: (500, {"error": {"message": "engine is down", "code": 500}})  # noqa: E731
    routes = {("POST", "/v1/completions"): refuse, ("POST", "/v1/chat/completions"): refuse}
    with FakeEngine("vllm", routes=routes) as engine:
        assert main(["doctor", "--no-context-check", "--timeout", "5", engine.url]) == 1
    out = capsys.readouterr().out
    assert "use --mode" not in out and "neither completions nor chat answered" in out


# --- the deployment lint (runners/deployment_lint.py) on fakes that state each case ---------------------------

QWEN = "tests/runners/fixtures/model_configs/qwen2_5_7b_instruct.json"
SGLANG_INFO = "tests/runners/fixtures/sglang/server_info_from_source.json"


def _config(tmp_path, **changes) -> str:  # type: ignore[no-untyped-def]
    import json
    from pathlib import Path

    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(Path(QWEN).read_text()), **changes}))
    return str(path)


def _lint(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["doctor", "--no-context-check", *argv]) == 0  # a finding is not a failed check
    return [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip().startswith("lint:")]


@pytest.mark.parametrize(
    ("case", "served", "changes", "rule_text"),
    [
        (
            "no rope scaling",
            1_048_576,
            {"max_position_embeddings": 262144, "sliding_window": None},
            "above the model's 262,144 positions",
        ),
        (
            "past factor x original",
            262_144,
            {
                "sliding_window": None,
                "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            },
            "above the scaled range 131,072",
        ),
        (
            "no rope type",
            32768,
            {"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768}},
            "names no type",
        ),
        (
            "keys not read",
            32768,
            {"rope_scaling": {"rope_type": "linear", "factor": 2.0, "scaling_factor": 2.0}},
            "does not read: scaling_factor",
        ),
        (
            "factor without original",
            32768,
            {"rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
            "has a factor but no original length",
        ),
        ("window on full layers", 32768, {"sliding_window": 4096}, "while no layer is sliding-window attention"),
    ],
)
def test_doctor_names_each_model_config_case_with_its_sources(
    case: str, served: int, changes: dict, rule_text: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, **changes)
    with FakeEngine("vllm", context_length=served, answer="ready") as engine:
        lines = _lint(["--config", config, engine.url], capsys)
    assert len(lines) == 1, (case, lines)
    assert rule_text in lines[0] and config in lines[0], case
    if case.startswith(("no rope scaling", "past")):
        assert f"{served:,} (GET /v1/models max_model_len)" in lines[0]


def test_doctor_lints_llama_servers_slots_and_trained_context_against_max_length(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeEngine("llama-server", context_length=4096, slots=2, n_ctx_train=32768, answer="ready") as engine:
        lines = _lint(["--max-length", "40000", engine.url], capsys)
        assert _lint(["--max-length", "4000", engine.url], capsys) == []
    slot, trained = lines
    assert "context per slot 4,096 (GET /props default_generation_settings.n_ctx (per slot))" in slot
    assert "divided among 2 slots (GET /props total_slots)" in slot
    assert (
        "longest length 40,000 is above the model's trained context 32,768 (GET /v1/models meta.n_ctx_train)" in trained
    )


def test_doctor_reads_sglangs_config_override_in_place_of_the_file(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.runners.replay_server import captured

    info = captured(__import__("pathlib").Path(SGLANG_INFO).parent, "server_info_from_source")["body"]
    config = _config(tmp_path, sliding_window=None)
    with FakeEngine(
        "sglang", context_length=262144, answer="ready", routes={("GET", "/server_info"): lambda engine, _: (200, info)}
    ) as engine:
        lines = _lint(["--config", config, engine.url], capsys)
    [line] = lines
    assert "scaled range 131,072 (GET /server_info json_model_override_args rope_scaling: factor 4 × original" in line


def test_doctor_without_a_config_or_lengths_lints_nothing_and_a_bad_config_is_one_line(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=1_048_576, answer="ready") as engine:
        assert _lint([engine.url], capsys) == []  # its model path is not on this machine: nothing to hold it against
        assert main(["doctor", "--config", str(tmp_path / "nope.json"), engine.url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.json" in err[0]


def test_without_config_the_model_folder_the_engine_states_is_read(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM's `/v1/models` `root` is the folder it was started with (ctxprobe's `--engine vllm` too)."""
    folder = tmp_path / "ling"
    folder.mkdir()
    (folder / "config.json").write_text('{"max_position_embeddings": 262144, "rope_scaling": null}')
    with FakeEngine("vllm", model=str(folder), context_length=1_048_576, answer="ready") as engine:
        [line] = _lint([engine.url], capsys)
    assert f"262,144 positions (config.json ({folder / 'config.json'}) max_position_embeddings)" in line
