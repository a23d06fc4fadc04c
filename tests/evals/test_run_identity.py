"""A sample's identity is what it asks and which tokenizer counts it, never where a server lives: the same
suite against two addresses gives the same ids and prompts, a resume against a moved server keeps every
finished sample, and a run ends with an exit code a nightly job can trust (0, 1, 3, 130)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine, Reply

SUITE = ["--family", "niah", "--lengths", "1k", "--depths", "0,50,100", "--samples", "2", "--quiet"]
ROOT = Path(__file__).resolve().parents[2]


def lines(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


def only_dir(results: Path) -> Path:
    dirs = [p for p in results.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def ids_and_shas(run_dir: Path) -> set[tuple[str, str]]:
    return {(r["sample"]["sample_id"], r["sample"]["prompt_sha256"]) for r in lines(run_dir)}  # type: ignore[index]


def test_two_addresses_serving_one_model_give_the_same_samples(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a, FakeEngine("sglang", context_length=8192) as b:
        assert main(["run", "--endpoint", a.url, *SUITE, "--results-dir", str(tmp_path / "a")]) == 0
        assert main(["run", "--endpoint", b.url, *SUITE, "--results-dir", str(tmp_path / "b")]) == 0
    run_a, run_b = only_dir(tmp_path / "a"), only_dir(tmp_path / "b")
    assert len(ids_and_shas(run_a)) == 6 and ids_and_shas(run_a) == ids_and_shas(run_b)
    ma = json.loads((run_a / "manifest.json").read_text())
    mb = json.loads((run_b / "manifest.json").read_text())
    assert ma["tokenizer"] == mb["tokenizer"] and ma["tokenizer"].startswith("tok-")
    assert ma["token_counter"] != mb["token_counter"]  # where it was reached is a run option, not identity
    assert ma["model"] == mb["model"] == "fake-model"  # no --model: the one the endpoint serves
    assert all("127.0.0.1" not in json.dumps(r["sample"]) for r in lines(run_a))  # type: ignore[index]


def test_resume_against_a_moved_server_keeps_every_finished_sample(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        a.script.extend(Reply(status=500) for _ in range(2))  # two samples end in http errors
        code = main(
            ["run", "--endpoint", a.url, *SUITE, "--retries", "0", "--concurrency", "1", "--results-dir", str(tmp_path)]
        )
    assert code == 1  # samples ended in errors
    run_dir = only_dir(tmp_path)
    before = (run_dir / "samples.jsonl").read_text().splitlines()
    assert sum(json.loads(x)["error"] is not None for x in before) == 2
    with FakeEngine("vllm", context_length=8192) as b:  # the same model, now at another port
        code = main(["run", "--resume", str(run_dir), "--endpoint", b.url, "--quiet"])
        assert len(b.completion_calls()) == 2  # only the errored ones are sent again
    assert code == 0
    after = (run_dir / "samples.jsonl").read_text().splitlines()
    assert after[: len(before)] == before and len(after) == len(before) + 2  # nothing rewritten or dropped
    latest = {json.loads(x)["sample"]["sample_id"]: json.loads(x) for x in after}
    assert len(latest) == 6 and all(r["error"] is None for r in latest.values())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["endpoints"] == [b.url]


def test_resume_refuses_a_changed_plan_and_drops_nothing(tmp_path: Path, capsys: object) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        assert main(["run", "--endpoint", a.url, *SUITE, "--results-dir", str(tmp_path)]) == 0
        run_dir = only_dir(tmp_path)
        before = (run_dir / "samples.jsonl").read_text()
        code = main(["run", "--resume", str(run_dir), "--token-counter", "estimate", "--quiet"])
    assert code == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "cannot resume" in err and "tokenizer" in err
    assert (run_dir / "samples.jsonl").read_text() == before


def test_every_sample_errored_exits_1(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        a.script.extend(Reply(status=500) for _ in range(6))
        code = main(["run", "--endpoint", a.url, *SUITE, "--retries", "0", "--results-dir", str(tmp_path)])
    assert code == 1
    with FakeEngine("vllm", context_length=8192) as a:
        a.script.extend(Reply(status=500) for _ in range(6))
        code = main(
            [
                "run",
                "--endpoint",
                a.url,
                *SUITE,
                "--retries",
                "0",
                "--allow-errors",
                "--results-dir",
                str(tmp_path / "allowed"),
            ]
        )
    assert code == 0


@pytest.mark.usefixtures("quick_backoff")  # its one retry is not what is tested here
def test_an_endpoint_that_goes_away_ends_the_run_cleanly(tmp_path: Path, capsys: object) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        answered = itertools.count(1)

        def answer(body: dict[str, object]) -> str:
            if next(answered) == 2:
                threading.Timer(0.0, a.kill).start()  # the server dies mid-run, after its second answer
            return "The answer is 42."

        a.answer = answer
        code = main(
            [
                "run",
                "--endpoint",
                a.url,
                *SUITE[:-1],
                "--samples",
                "6",
                "--concurrency",
                "1",
                "--quiet",
                "--retries",
                "1",
                "--results-dir",
                str(tmp_path),
            ]
        )
    assert code == 3
    run_dir = only_dir(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "endpoint_lost"
    done = lines(run_dir)
    assert 1 <= len(done) < 18 and manifest["samples_done"] == sum(r["error"] is None for r in done)
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert f"ctxprobe run --resume {run_dir}" in err and "not sent" in err


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_is_handled_like_ctrl_c(tmp_path: Path, sigint: str) -> None:
    """Also where SIGINT is ignored (`nohup ctxprobe run … &`, a script's background job): the interrupt then
    ends the event loop between steps, never inside a send's code, so asyncio prints no task's traceback."""
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint == "ignored" else None
    with FakeEngine("vllm", context_length=8192) as a:
        a.script.extend(Reply(delay_s=0.2) for _ in range(40))
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctxprobe.evals.cli.main",
                "run",
                "--endpoint",
                a.url,
                *SUITE[:-1],
                "--samples",
                "10",
                "--concurrency",
                "1",
                "--quiet",
                "--no-report",  # the interrupt is the subject, not the report
                "--results-dir",
                str(tmp_path),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=ignore,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            runs = [p for p in tmp_path.iterdir() if (p / "samples.jsonl").exists()] if tmp_path.exists() else []
            if runs and len((runs[0] / "samples.jsonl").read_text().splitlines()) >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    run_dir = only_dir(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len(lines(run_dir)) >= 2 and manifest["samples_done"] == len(lines(run_dir))
    assert "Traceback" not in err and "--resume" in err, err
    assert "never retrieved" not in err and "destroyed but it is pending" not in err, err


def test_a_suite_tasks_mode_is_used(tmp_path: Path) -> None:
    suite = tmp_path / "mixed.yaml"
    suite.write_text(
        "name: mixed\nlengths: [1k]\ndepths: [50]\ntasks:\n"
        "  - family: niah\n    mode: completions\n  - family: recall\n    mode: chat\n"
    )
    with FakeEngine("vllm", context_length=8192) as a:
        assert (
            main(["run", "--endpoint", a.url, "--suite", str(suite), "--quiet", "--results-dir", str(tmp_path / "r")])
            == 0
        )
        paths = sorted(c.path for c in a.completion_calls())
    assert paths == ["/v1/chat/completions", "/v1/completions"]
    modes = {r["sample"]["recipe"]["family"]: r["sample"]["recipe"]["mode"] for r in lines(only_dir(tmp_path / "r"))}  # type: ignore[index]
    assert modes == {"niah": "completions", "recall": "chat"}


def test_the_engines_metrics_over_the_run_go_into_the_manifest(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a, FakeEngine("vllm", context_length=8192) as b:
        assert main(["run", "--endpoint", a.url, "--endpoint", b.url, *SUITE, "--results-dir", str(tmp_path)]) == 0
        sent = len(a.completion_calls()) + len(b.completion_calls())
    metrics = json.loads((only_dir(tmp_path) / "manifest.json").read_text())["engine_metrics"]
    assert sent == 6
    # the fake's counters grow by 40 ("cache" metrics) or 100 per completion it served: both replicas summed
    assert metrics["prefix_cache_hits"] == 40 * sent and metrics["cached_prompt_tokens"] == 40 * sent
    assert metrics["ttft_seconds_count"] == 100 * sent and metrics["prefix_cache_hit_rate"] == 1.0
    assert metrics["spec_draft_tokens"] == 100 * sent and metrics["spec_acceptance_rate"] == 0.6
    with FakeEngine("llama-cpp-python", context_length=8192) as c:  # no /metrics: nothing recorded, no failure
        assert main(["run", "--endpoint", c.url, *SUITE, "--results-dir", str(tmp_path / "none")]) == 0
    assert json.loads((only_dir(tmp_path / "none") / "manifest.json").read_text())["engine_metrics"] is None


def test_prompt_rebuilds_a_recorded_sample_and_reports_a_sha256_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=8192) as a:
        assert (
            main(["run", "--endpoint", a.url, *SUITE, "--token-counter", "estimate", "--results-dir", str(tmp_path)])
            == 0
        )
    run_dir = only_dir(tmp_path)
    first = lines(run_dir)[0]["sample"]
    capsys.readouterr()
    assert main(["prompt", str(run_dir), first["sample_id"], "--sha256"]) == 0  # type: ignore[index]
    assert capsys.readouterr().out.strip() == first["prompt_sha256"]  # type: ignore[index]
    samples = run_dir / "samples.jsonl"
    samples.write_text(samples.read_text().replace(first["prompt_sha256"], "0" * 64, 1))  # type: ignore[index]
    assert main(["prompt", str(run_dir), first["sample_id"]]) == 2  # type: ignore[index]
    assert "sha256" in capsys.readouterr().err
