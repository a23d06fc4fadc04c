"""One run, one folder, one writer: runs started in the same second with one label get folders of their own,
and a second writer of a folder (a run or a `--resume`) is refused in one line naming the holder's pid."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records import store as store_module
from ctxprobe.evals.records.lock import FolderBusy, writer_lock
from ctxprobe.evals.records.store import claim_run_folder
from ctxprobe.evals.report import summary  # noqa: F401 - imported before the threads that use it
from tests.runners.fake_engine import FakeEngine, Reply

ROOT = Path(__file__).resolve().parents[2]


def _run_args(url: str, results: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--endpoint",
        url,
        "--family",
        "niah",
        "--lengths",
        "1k",
        "--depths",
        "0,50,100",
        "--samples",
        "2",
        "--label",
        "nightly",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(results),
        *extra,
    ]


def test_folders_claimed_at_once_are_all_distinct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        store_module, "time", SimpleNamespace(strftime=lambda fmt: "20261201-000000")
    )  # one second for all
    claimed: list[Path] = []
    threads = [
        threading.Thread(target=lambda: claimed.append(claim_run_folder(tmp_path, "nightly"))) for _ in range(16)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(claimed)) == 16 and all(p.is_dir() for p in claimed)
    assert sorted(p.name for p in claimed)[:2] == ["20261201-000000-nightly", "20261201-000000-nightly-10"]


def test_a_long_label_makes_a_valid_folder_name(tmp_path: Path) -> None:
    path = claim_run_folder(tmp_path, "x" * 300)
    assert path.is_dir() and len(path.name) < 100


def test_two_runs_with_one_label_in_one_second_do_not_blend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "time", SimpleNamespace(strftime=lambda fmt: "20261201-000000"))
    codes: list[int] = []
    with (
        FakeEngine("vllm", answer="The number is 1111111.") as a,
        FakeEngine("vllm", answer="The number is 2222222.") as b,
    ):
        runs = [
            threading.Thread(target=lambda u=u: codes.append(main(_run_args(u, tmp_path, "--allow-errors"))))
            for u in (a.url, b.url)
        ]
        for t in runs:
            t.start()
        for t in runs:
            t.join()
    assert codes == [0, 0]
    folders = sorted(tmp_path.iterdir())
    assert len(folders) == 2
    for folder in folders:
        manifest = json.loads((folder / "manifest.json").read_text())
        texts = {json.loads(line)["response"]["text"] for line in (folder / "samples.jsonl").read_text().splitlines()}
        assert len(manifest["endpoints"]) == 1 and len(texts) == 1  # one server's answers only
        assert manifest["samples_done"] == 6


HOLDER = """
import sys, time
from pathlib import Path
from types import SimpleNamespace
from ctxprobe.evals.records.lock import writer_lock
with writer_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def _hold(folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True, env=env)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_blocks_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        assert main(_run_args(engine.url, tmp_path, "--allow-errors")) == 0
        folder = next(tmp_path.iterdir())
        lines = (folder / "samples.jsonl").read_bytes()
        sent = len(engine.completion_calls())
        holder = _hold(folder)
        try:
            capsys.readouterr()
            assert main(["run", "--resume", str(folder), "--quiet"]) == 2
            err = capsys.readouterr().err.strip()
            assert err == (
                f"ctxprobe: error: {folder} is being written by another ctxprobe process "
                f"(pid {holder.pid}); wait for it to end, or start a new run"
            )
            assert len(engine.completion_calls()) == sent and (folder / "samples.jsonl").read_bytes() == lines
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait()
        assert main(["run", "--resume", str(folder), "--quiet", "--allow-errors"]) == 0  # the kernel let go


def test_the_lock_is_exclusive_within_one_process_too(tmp_path: Path) -> None:
    with writer_lock(tmp_path), pytest.raises(FolderBusy, match=f"pid {os.getpid()}"), writer_lock(tmp_path):
        pass
    with writer_lock(tmp_path):  # released on exit
        pass


def test_two_resumes_at_once_send_each_sample_once(tmp_path: Path) -> None:
    """The attack's case: two `--resume` of one folder at once. One resumes; the other is refused."""
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        engine.script.extend([Reply(status=500)] * 6 + [Reply(delay_s=0.2)] * 6)  # errors, then slow answers
        main(_run_args(engine.url, tmp_path, "--retries", "0", "--allow-errors"))
        folder = next(tmp_path.iterdir())
        before = len(engine.completion_calls())
        codes: list[int] = []
        resumes = [
            threading.Thread(
                target=lambda: codes.append(main(["run", "--resume", str(folder), "--quiet", "--allow-errors"]))
            )
            for _ in range(2)
        ]
        for t in resumes:
            t.start()
        for t in resumes:
            t.join()
        assert sorted(codes) in ([0, 2], [0, 0])  # refused while the other wrote, or after it had finished
        assert len(engine.completion_calls()) - before == 6  # every errored sample sent again exactly once
    assert ctxprobe.load_run(folder).manifest.samples_done == 6
