"""`ctxprobe limit` against a real vLLM server: the configured and accepted lengths with the too-long
rejection's lower bound, and `--engine vllm` started by ctxprobe, stopped by SIGTERM mid-search."""

from __future__ import annotations

import json
import re
import select
import signal
import time
from pathlib import Path

import pytest

from ctxprobe.runners.http_json import Unreachable, request_json
from ctxprobe.runners.vllm_engine import VllmEngine
from ctxprobe.tasks.assemble import tolerance
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir, popen
from tests.e2e.vllm.conftest import MAX_MODEL_LEN, VllmEnv

pytestmark = pytest.mark.vllm

ROOM = 64  # limit's default answer room


def test_limit_states_configured_and_accepted_with_the_lower_bound(details: VllmEngine, tmp_path: Path) -> None:
    done = ctxprobe("limit", details.base_url, "--skip-effective", "--results-dir", str(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    target = json.loads((only_run_dir(tmp_path) / "limit.json").read_text())["targets"][0]
    accepted = target["accepted"]
    assert (target["configured"], target["configured_source"]) == (MAX_MODEL_LEN, "GET /v1/models max_model_len")
    goal = MAX_MODEL_LEN - ROOM
    assert goal - tolerance(goal) <= accepted["accepted_tokens"] <= goal
    assert accepted["largest_taken_served"] == accepted["largest_taken"]  # the server counted the plan's tokens
    assert accepted["stated_limit"] == MAX_MODEL_LEN and accepted["rejected_tokens"] > MAX_MODEL_LEN
    assert accepted["rejected_served"] is None  # "at least N" is not the prompt's size ...
    assert accepted["rejected_served_at_least"] == MAX_MODEL_LEN + 1  # ... only a bound of it
    assert f"the server said at least {MAX_MODEL_LEN + 1:,}" in done.stdout
    assert re.search(r"configured\s+2,048", done.stdout) and re.search(
        rf"accepted\s+{accepted['accepted_tokens']:,}", done.stdout
    )


def test_engine_vllm_limit_shows_progress_and_ends_interrupted_on_sigterm(vllm_env: VllmEnv, tmp_path: Path) -> None:
    proc = popen(
        "limit",
        "--engine",
        "vllm",
        "--model-dir",
        vllm_env.model_dir,
        "--vllm-python",
        vllm_env.python,
        "--max-model-len",
        "1024",
        "--vllm-args=--enforce-eager",
        "--min-length",
        "512",
        "--task",
        "niah:variant=single",
        "--max-samples",
        "40",
        "--batch",
        "4",
        "--results-dir",
        str(tmp_path),
    )
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not any("ETA" in line for line in seen):
        ready, _, _ = select.select([proc.stderr], [], [], 5)
        if ready:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
    assert any("ETA" in line for line in seen), "".join(seen)[-3000:]
    plan = next(line for line in seen if "effective search from" in line)
    url = re.search(r"(http://127\.0\.0\.1:\d+)", plan).group(1)  # type: ignore[union-attr]
    assert "configured 1,024" in "".join(seen)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    assert proc.returncode == 130, "".join(seen) + proc.stderr.read()[-2000:]
    manifest = json.loads((only_run_dir(tmp_path) / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["engine"]["engine"] == "vllm"
    with pytest.raises(Unreachable):  # the server ctxprobe started is gone with it
        request_json("GET", f"{url}/health", timeout_s=5)
