"""Bad input ends in one line on stderr and exit code 2 — never a traceback — for every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evals.in_process import ends
from tests.tiered import tiered

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


CASES = {
    "unknown family": lambda t: ["run", "--family", "nope", "--lengths", "1k"],
    "unknown parameter": lambda t: ["run", "--family", "niah", "--params", "colour=red"],
    "invalid parameter value": lambda t: ["run", "--family", "niah", "--params", "variant=triple"],
    "unknown haystack": lambda t: ["run", "--family", "niah", "--haystack", "poetry"],
    "missing haystack file": lambda t: [
        "prompt",
        write(t, "r.json", '{"family": "niah", "haystack": "file:/no/such/file.txt", "context_tokens": 2048}'),
    ],
    "invalid length": lambda t: ["run", "--family", "niah", "--lengths", "12q"],
    "length too small": lambda t: [
        "prompt",
        write(t, "r.json", '{"family": "niah", "haystack": "noise", "context_tokens": 60}'),
    ],
    "depth outside 0-100": lambda t: ["run", "--family", "niah", "--depths", "0,50,120"],
    "unknown suite": lambda t: ["run", "--suite", "weekly"],
    "malformed suite yaml": lambda t: ["run", "--suite", write(t, "s.yaml", "name: x\nlengths: [1k\n")],
    "suite missing tasks": lambda t: ["run", "--suite", write(t, "s.yaml", "name: x\nlengths: [1k]\ndepths: [50]\n")],
    "suite with unknown family": lambda t: [
        "run",
        "--suite",
        write(t, "s.yaml", "name: x\nlengths: [1k]\ndepths: [50]\ntasks: [{family: nope}]\n"),
    ],
    "unreachable endpoint": lambda t: [
        "run",
        "--family",
        "niah",
        "--retries",
        "1",
        "--endpoint",
        f"http://127.0.0.1:{closed_port()}",
    ],
    "invalid endpoint url": lambda t: ["run", "--family", "niah", "--endpoint", "not a url"],
    "missing model file": lambda t: ["run", "--family", "niah", "--model-file", "/no/such/model.gguf"],
    "unknown flag": lambda t: ["run", "--frobnicate"],
    "show on a non-run folder": lambda t: ["show", str(t)],
    "prompt for an unknown sample": lambda t: ["prompt", str(t), "abc"],
    "limit with bad min-accuracy": lambda t: ["limit", "--min-accuracy", "1.5"],
    "limit with unknown task": lambda t: ["limit", "--task", "nope"],
    "limit with missing config": lambda t: ["limit", "--config", "/no/config.json"],
    "unknown token counter": lambda t: ["run", "--family", "niah", "--token-counter", "magic"],
    "resume of an empty manifest": lambda t: ["run", "--resume", _run_dir(t, "{}")],
    "resume of a manifest that is not an object": lambda t: ["run", "--resume", _run_dir(t, "[1, 2]")],
    "missing local tokenizer path": lambda t: [
        "run",
        "--family",
        "niah",
        "--token-counter",
        "local:/nonexistent",
        "--results-dir",
        str(t / "r"),
    ],
    "hub tokenizer while offline": lambda t: [
        "run",
        "--family",
        "niah",
        "--token-counter",
        "local:no-org/no-model",
        "--results-dir",
        str(t / "r"),
    ],
    "results dir under a file": lambda t: [
        "run",
        "--family",
        "niah",
        "--results-dir",
        write(t, "plain-file", "x") + "/runs",
    ],
    "concurrency 0": lambda t: ["run", "--family", "niah", "--concurrency", "0"],
    "negative retries": lambda t: ["run", "--family", "niah", "--retries", "-1"],
    "unreachable endpoint with the estimate counter": lambda t: [
        "run",
        "--family",
        "niah",
        "--token-counter",
        "estimate",
        "--results-dir",
        str(t / "r"),
        "--retries",
        "1",
        "--endpoint",
        f"http://127.0.0.1:{closed_port()}",
    ],
}


def _run_dir(tmp: Path, manifest: str) -> str:
    run = tmp / "run"
    run.mkdir()
    (run / "manifest.json").write_text(manifest)
    return str(run)


def _case_args(case: str, tmp_path: Path) -> tuple[list[str], Path]:
    """The case's command line, and the folder it must leave without a run folder in it."""
    if case == "show on a non-run folder" or case == "prompt for an unknown sample":
        (tmp_path / "empty").mkdir()
        tmp_path = tmp_path / "empty"
    return CASES[case](tmp_path), tmp_path / "r"


def _check_refused(code: int, err: str, results: Path) -> None:
    assert code == 2, (code, err[-1500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "error" in lines[0]
    assert not results.exists() or not any(results.iterdir()), "a run folder was left behind"


# HF_HUB_OFFLINE is read when huggingface_hub is imported: only a process of its own is sure to start offline.
PROCESS_ONLY = {"hub tokenizer while offline"}


@pytest.mark.parametrize("case", sorted(set(CASES) - PROCESS_ONLY))
def test_bad_input_is_one_line_and_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, results = _case_args(case, tmp_path)
    code, _, err = ends(args, capsys)
    _check_refused(code, err, results)


# Every case once more as a user meets it, in a process of its own: in the slow tier, but for the cases only a
# process can check and one other (tests/tiered.py).
@pytest.mark.parametrize("case", tiered(sorted(CASES), sorted(CASES), lambda case: [case in PROCESS_ONLY or "any"]))
def test_bad_input_in_a_process_of_its_own_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    args, results = _case_args(case, tmp_path)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "ctxprobe.evals.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    _check_refused(done.returncode, done.stderr, results)


def test_parallel_0_is_refused_not_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from ctxprobe.evals.cli.main import main

    code = main(["run", "--parallel", "0", "--family", "niah", "--lengths", "1k", "--results-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert (
        code == 2 and len(err.strip().splitlines()) == 1 and "--parallel" in err and "greater than or equal to 1" in err
    )
    assert not any(tmp_path.iterdir())
