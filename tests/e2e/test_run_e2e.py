"""`ctxprobe run` end to end on the real embedded engine (llama.cpp serving Gemma 3 270M)."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from ctxprobe_cli import ctxprobe, only_run_dir, popen

pytestmark = pytest.mark.engine

SECRET = "sk-ctxprobe-test-7f3a9c2e41d8b6"


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def test_quick_subset_runs_scores_and_reports(tmp_path: Path) -> None:
    # the README's first command, as a user runs it (quick: 1K-4K, every family)
    done = ctxprobe(
        "run",
        "--suite",
        "quick",
        "--label",
        "e2e quick",
        "--results-dir",
        str(tmp_path),
        env={"OPENAI_API_KEY": SECRET},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = only_run_dir(tmp_path)
    recs = records(run_dir)
    ids = [r["sample"]["sample_id"] for r in recs]
    assert len(ids) == len(set(ids))
    single = [
        r
        for r in recs
        if r["sample"]["recipe"]["family"] == "niah" and r["sample"]["recipe"]["params"].get("variant") == "single"
    ]
    assert len(single) == 3 * 3
    assert {r["sample"]["recipe"]["family"] for r in recs} == {"niah", "recall", "multihop"}
    assert all(r["error"] is None for r in single)
    accuracy = sum(r["score"]["correct"] for r in single) / len(single)
    assert accuracy >= 0.8, accuracy
    # planned lengths are what the server counted
    assert all(r["response"]["prompt_tokens"] == r["sample"]["planned_tokens"] for r in single)

    table = pd.read_csv(run_dir / "summary.csv")
    cells = table[(table.family == "niah") & table.variant.str.contains("single")]
    assert sorted(cells.context_tokens.unique()) == [1024, 2048, 4096]
    assert sorted(cells.depth.unique()) == [0.0, 50.0, 100.0]
    assert (cells.n == 1).all()
    assert (run_dir / "heatmap_niah.png").stat().st_size > 10_000
    assert "niah" in done.stdout and "4K" in done.stdout

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["label"] == "e2e quick"
    assert manifest["engine"]["engine"] == "llama-server" and manifest["engine"]["context_length"] >= 4096
    assert manifest["engine"]["slots"] == 1 and manifest["options"]["parallel"] is None
    assert manifest["token_counter"] == "local:gemma3-270m"
    # quick states cache_check: off (too few checks for the control's sign test): recorded and said in one line
    assert manifest["cache_check"]["verdict"] == "off" and manifest["cache_check"]["stated"].endswith("suite quick")
    assert "cache path: not checked (cache_check: off in suite quick" in done.stderr
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def _unreachable(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/v1/models", timeout=2)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return True
    return False


SAMPLES, KILL_AFTER = 6, 2


def test_kill_9_mid_run_then_resume_keeps_every_sample_once(tmp_path: Path) -> None:
    # six samples of 512 tokens (the kill is the point, not the length): killed after two, four left to resume
    args = ("run", "--family", "niah", "--lengths", "512", "--depths", "0:100:20", "--results-dir", str(tmp_path))
    proc = popen(*args)
    deadline = time.monotonic() + 300
    samples = None
    while time.monotonic() < deadline:
        dirs = [p for p in tmp_path.iterdir() if p.is_dir()]
        samples = dirs[0] / "samples.jsonl" if dirs else None
        if samples and samples.exists() and samples.read_text().count("\n") >= KILL_AFTER:
            break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    run_dir = only_run_dir(tmp_path)
    before = records(run_dir)
    assert KILL_AFTER <= len(before) < SAMPLES

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "running"
    engine_url = manifest["endpoints"][0]
    for _ in range(50):  # the embedded engine dies with its parent
        if _unreachable(engine_url):
            break
        time.sleep(0.2)
    assert _unreachable(engine_url)

    done = ctxprobe("run", "--resume", str(run_dir))
    assert done.returncode == 0, done.stderr[-2000:]
    after = records(run_dir)
    ids = [r["sample"]["sample_id"] for r in after]
    assert len(ids) == SAMPLES and len(set(ids)) == SAMPLES
    kept = {r["sample"]["sample_id"]: r for r in after}
    for r in before:  # finished samples were kept as they were, not sent again
        assert kept[r["sample"]["sample_id"]] == r
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "finished"


def _slot_busy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/slots", timeout=2) as resp:
            return any(slot.get("is_processing") for slot in json.load(resp))
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def test_ctrl_c_during_a_prefill_leaves_no_process_and_an_interrupted_run(tmp_path: Path) -> None:
    proc = popen(
        "run",
        "--family",
        "niah",
        "--lengths",
        "4k",
        "--depths",
        "50",
        "--samples",
        "1",
        "--quiet",
        "--results-dir",
        str(tmp_path),
    )
    deadline = time.monotonic() + 300
    url = None
    while time.monotonic() < deadline and proc.poll() is None:
        manifests = list(tmp_path.glob("*/manifest.json"))
        url = json.loads(manifests[0].read_text())["endpoints"][0] if manifests else None
        if url and _slot_busy(url):
            break
        time.sleep(0.05)
    assert url and proc.poll() is None, "the run never reached its prefill"
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        engine_pids = [int(p) for p in f.read().split()]
    assert engine_pids
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends ctxprobe (the engine has a session of its own)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    assert not any(os.path.exists(f"/proc/{pid}") for pid in engine_pids)
    assert _unreachable(url)
    assert json.loads(only_run_dir(tmp_path).joinpath("manifest.json").read_text())["status"] == "interrupted"


def test_the_deployment_lint_is_silent_on_the_embedded_engines_own_model_and_speaks_on_a_wrong_config(
    tmp_path: Path,
) -> None:
    """The lint reads the GGUF the engine states it loaded (no --config): nothing to say. Given a config whose
    positions are below what is served, the same run says so at its start and keeps it in its manifest."""
    grid = ("--family", "niah", "--lengths", "1k", "--depths", "50", "--samples", "1")
    done = ctxprobe("run", *grid, "--results-dir", str(tmp_path / "own"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lint:" not in done.stderr
    assert json.loads((only_run_dir(tmp_path / "own") / "manifest.json").read_text())["deployment_lint"] == []

    config = tmp_path / "config.json"
    config.write_text('{"max_position_embeddings": 512, "model_type": "gemma3_text"}')
    done = ctxprobe("run", *grid, "--config", str(config), "--results-dir", str(tmp_path / "wrong"))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("ctxprobe: lint: ")]
    manifest = json.loads((only_run_dir(tmp_path / "wrong") / "manifest.json").read_text())
    assert [line["rule"] for line in manifest["deployment_lint"]] == ["served_over_positions", "trained_below_suite"]
    assert len(lines) == 2 and "GET /props default_generation_settings.n_ctx (per slot)" in lines[0]
