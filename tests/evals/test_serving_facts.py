"""The serving facts a run decides once: the mode (`resolve_mode`: an explicit --mode, then a task's own
mode, then the suite's, then the endpoint's default), written to the manifest from the same place the
samples take it; and the model the probe found, which every client uses, so a run lists `/v1/models` once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.tasks.suite import resolve_mode
from tests.runners.fake_engine import FakeEngine


def _suite(tmp_path: Path, mode: str | None, task_mode: str | None = None) -> Path:
    lines = ["name: modes", "lengths: [1k]", "depths: [50]"] + ([f"mode: {mode}"] if mode else [])
    lines += ["tasks:", "  - family: niah", "    params: {variant: single}"]
    lines += [f"    mode: {task_mode}"] if task_mode else []
    path = tmp_path / "modes.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(engine: FakeEngine, tmp_path: Path, suite: Path, flag: str | None) -> tuple[dict, list[dict]]:
    argv = [
        "run",
        "--endpoint",
        engine.url,
        "--suite",
        str(suite),
        "--quiet",
        "--allow-errors",
        "--no-report",
        "--results-dir",
        str(tmp_path / "results"),
    ] + (["--mode", flag] if flag else [])
    assert main(argv) == 0
    run_dir = next((tmp_path / "results").iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    return manifest, records


@pytest.mark.parametrize(
    ("suite_mode", "flag", "expected"),
    [
        ("completions", None, "completions"),  # the suite's own mode over the remote default (the manifest said chat)
        ("completions", "chat", "chat"),  # the flag over the suite's
        ("chat", "completions", "completions"),
        (None, None, "chat"),  # a remote endpoint's default
        (None, "completions", "completions"),
    ],
)
def test_the_manifest_records_the_mode_the_samples_were_sent_in(
    tmp_path: Path, suite_mode: str | None, flag: str | None, expected: str
) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        manifest, records = _run(engine, tmp_path, _suite(tmp_path, suite_mode), flag)
        paths = {r.path for r in engine.completion_calls()}
    assert manifest["mode"] == expected
    assert records and {r["sample"]["recipe"]["mode"] for r in records} == {expected}
    assert paths == {"/v1/chat/completions" if expected == "chat" else "/v1/completions"}


def test_a_tasks_own_mode_sits_between_the_flag_and_the_suites(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        manifest, records = _run(engine, tmp_path, _suite(tmp_path, "chat", task_mode="completions"), None)
    assert manifest["mode"] == "chat"  # the run's mode; the one task keeps its own
    assert {r["sample"]["recipe"]["mode"] for r in records} == {"completions"}


def test_resolve_mode_precedence() -> None:
    assert resolve_mode(None, None, None, default="chat") == "chat"
    assert resolve_mode(None, None, "completions", default="chat") == "completions"
    assert resolve_mode(None, "chat", "completions", default="completions") == "chat"
    assert resolve_mode("completions", "chat", "chat", default="chat") == "completions"


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_a_run_lists_the_endpoints_models_once(tmp_path: Path, mode: str) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        _run(engine, tmp_path, _suite(tmp_path, None), mode)
        listings = engine.model_listings()
        sent = len(engine.completion_calls())
    assert sent == 1 and listings == 1
