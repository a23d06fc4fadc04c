"""A run stops promptly however its prompt builds are stuck: SIGTERM while a long prompt's haystack is
being counted through a slow /tokenize (a cold count cache), against the fake vLLM in this process and the
CLI in a child process, as a scheduler would stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.runners.fake_engine import FakeEngine, wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_sigterm_during_a_long_prompt_build_ends_the_process_promptly(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=1 << 20, tokenize_delay_s=0.02) as engine:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctxprobe.evals.cli.main",
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "256k",
                "--depths",
                "50",
                "--samples",
                "2",
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CTXPROBE_CACHE": str(tmp_path / "cache")},
        )  # cold: ~25,000 units to count
        try:
            assert wait_until(lambda: engine.tokenize_calls > 20, timeout_s=60), "the build never started"
            assert not engine.completion_calls() and child.poll() is None  # still building the first prompt
            sent_at = time.monotonic()
            child.send_signal(signal.SIGTERM)
            _out, err = child.communicate(timeout=60)
            took = time.monotonic() - sent_at
            calls_at_exit = engine.tokenize_calls
            time.sleep(0.5)
            assert engine.tokenize_calls - calls_at_exit <= 8  # nothing goes on calling after the exit
        finally:
            if child.poll() is None:
                child.kill()
    assert child.returncode == 130, err
    assert took < 10, took  # the queued tokenize calls are not waited for (they would take minutes)
    assert "interrupted" in err and "Traceback" not in err
