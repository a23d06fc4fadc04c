"""The reuse line on the real embedded engine (llama.cpp serving Gemma 3 270M, whose layers are 5 of 6
sliding-window): an independent depth sweep with llama-server's window-sized SWA cache reuses far less than the
layout allows, and the run says so with the setting that restores it; with the full SWA cache (the embedded
default) it reuses what the layout allows and says nothing more. At 1K: the deepest needle's prefix already
reaches past the 512-token window, which is what the window cache cannot keep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

from ctxprobe.evals.run.reuse import WARN_SHARE

pytestmark = pytest.mark.engine

SWEEP = (
    "run",
    "--family",
    "niah",
    "--lengths",
    "1k",
    "--depths",
    "0:100:50",
    "--samples",
    "1",
    "--layout",
    "independent",
    "--mode",
    "completions",
    "--no-logprobs",
    "--no-report",
    "--timeout",
    "900",
)


def reuse_of(results: Path) -> dict:
    return json.loads((only_run_dir(results) / "manifest.json").read_text())["reuse"]


@pytest.mark.parametrize("swa_cache", ["window", "full"])
def test_an_independent_sweep_reuse_against_its_bound(swa_cache: str, tmp_path: Path) -> None:
    done = ctxprobe(*SWEEP, "--swa-cache", swa_cache, "--results-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    reuse = reuse_of(tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("ctxprobe: reuse")]
    # the deeper needles' prefixes: the layout allows a good share (520 tokens at 1K, past the 512-token window)
    assert reuse["bound_tokens"] > 500
    assert lines[0].startswith(f"ctxprobe: reuse: {100 * reuse['share']:.0f} % of the layout's bound")
    assert not any("disagree" in line for line in lines)  # the engine's own count matches its replies
    # and each reply's own count (timings.cache_n + prompt_n) its usage, on the window cache's checkpoints too
    assert reuse["timed_replies"] > 0 and reuse["timings_disagreed"] == 0, reuse
    if swa_cache == "window":
        assert reuse["share"] < WARN_SHARE and reuse["below"]
        assert "--swa-full" in lines[-1] and "--swa-cache full" in lines[-1]
    else:
        assert reuse["share"] >= WARN_SHARE and not reuse["below"]
        assert len(lines) == 1
