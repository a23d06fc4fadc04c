"""Bad input to `ctxprobe run`, `show` and `prompt` is refused before the heavy modules load (the HTTP
client, pandas, matplotlib, datasets): what makes each such error take a fraction of a second."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("openai", "httpx2", "pandas", "matplotlib", "datasets")
CASES = {
    "unknown suite": ["run", "--suite", "weekly"],
    "unknown parameter": ["run", "--family", "niah", "--params", "colour=red"],
    "concurrency 0": ["run", "--family", "niah", "--concurrency", "0"],
    "depth outside 0-100": ["run", "--family", "niah", "--depths", "0,50,120"],
    "show on a non-run folder": ["show", "."],
    "prompt of a missing file": ["prompt", "no-such-recipe.json"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_loads_no_heavy_module(case: str, tmp_path: Path) -> None:
    code = (
        "import sys\nfrom ctxprobe.evals.cli.main import main\n"
        f"code = main({CASES[case]!r})\n"
        f"print(code, [m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout.split(" ", 1) == ["2", "[]\n"], done.stdout + done.stderr
    assert done.stderr.startswith("ctxprobe: error: ") and done.stderr.count("\n") == 1, done.stderr


def test_a_good_recipe_still_builds_through_the_same_command(tmp_path: Path) -> None:
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"family": "niah", "context_tokens": 1024}))
    code = f"from ctxprobe.evals.cli.main import main\nraise SystemExit(main(['prompt', {str(recipe)!r}, '--sha256']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.strip()) == 64, done.stdout + done.stderr


def test_run_sends_its_first_request_before_loading_the_sdk_or_other_commands(tmp_path: Path) -> None:
    """`ctxprobe run`'s first request (the probe, over the standard library) comes before the OpenAI SDK and
    its HTTP stack load, and no other command's module is imported (benchmarks/bench_first_request.py)."""
    code = (
        "import http.client, os, sys\n"
        "def first(self, *a, **k):\n"
        "    print(sorted(m for m in sys.modules if m in ('openai', 'httpx2', 'aiohttp', 'pandas', 'matplotlib')"
        " or m.startswith('ctxprobe.evals.cli.') and m.rsplit('.', 1)[1] not in ('main', 'run', 'options')))\n"
        "    sys.stdout.flush(); os._exit(0)\n"
        "http.client.HTTPConnection.request = first\n"
        "from ctxprobe.evals.cli.main import main\n"
        f"main(['run', '--endpoint', 'http://127.0.0.1:9', '--suite', 'quick',"
        f" '--results-dir', {str(tmp_path)!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.stdout == "[]\n", done.stdout + done.stderr
