"""A disk that fills or a folder that cannot be written ends a run in one line with exit code 4, status
`failed` and the reason in the manifest, every finished line intact, and the folder resumable elsewhere;
`show` and `report` read a read-only folder. A real small tmpfs where this machine lets the tests mount one
(root), an injected OSError always."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records import store as store_module
from ctxprobe.evals.records.lines import scan
from tests.runners.fake_engine import FakeEngine


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
        "0:100:10",
        "--samples",
        "2",
        "--label",
        "nightly",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(results),
        "--concurrency",
        "1",
        *extra,
    ]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 88 KiB tmpfs (a disk that fills after a dozen samples), or a skip where mounting is not allowed."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=88k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root); the injected-OSError test covers the same path")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _check_failed_run(folder: Path, reason: str, err: str) -> int:
    """The ending of a run that could not write: one line, status failed with why, finished lines intact."""
    lines = [
        line
        for line in err.strip().splitlines()
        if line.startswith("ctxprobe:") and "samples to run" not in line and not line.startswith("ctxprobe: engine ")
    ]
    assert len(lines) == 1 and reason in lines[0] and "--resume" in lines[0], err
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "failed" and reason in manifest["status_detail"]
    found = scan(folder / "samples.jsonl")
    assert not found.damaged and 0 < len(found.records) < 22
    return len(found.records)


def test_a_disk_that_fills_ends_the_run_with_code_4_and_the_copy_resumes_elsewhere(
    small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        assert main(_run_args(engine.url, small_disk / "results", "--allow-errors")) == 4
        folder = next((small_disk / "results").iterdir())
        kept = _check_failed_run(folder, "No space left on device (ENOSPC)", capsys.readouterr().err)
        assert manifest_counts(folder) == (kept, 22)
        moved = tmp_path / "moved"
        shutil.copytree(folder, moved)
        assert main(["run", "--resume", str(moved), "--quiet", "--no-report", "--allow-errors"]) == 0
        assert len(engine.completion_calls()) <= 22 + 1  # at most the one in flight when the disk filled
    assert manifest_counts(moved) == (22, 22)


def manifest_counts(folder: Path) -> tuple[int, int]:
    m = json.loads((folder / "manifest.json").read_text())
    return m["samples_done"], m["samples_planned"]


def test_a_read_only_folder_is_shown_and_reported_and_refuses_a_resume_in_one_line(
    small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        args = _run_args(engine.url, small_disk, "--allow-errors")
        args[args.index("0:100:10")] = "0,100"
        assert main(args) == 0
        folder = next(p for p in small_disk.iterdir() if p.is_dir())
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        before = sorted(p.name for p in folder.iterdir())
        capsys.readouterr()
        assert main(["show", str(folder)]) == 0
        assert "read-only" in capsys.readouterr().out
        assert main(["report", str(folder), "-o", str(tmp_path / "page.html")]) == 0
        assert main(["check", str(folder)]) == 0
        assert main(["run", "--resume", str(folder), "--quiet"]) == 4
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "Read-only file system (EROFS)" in err[0]
        assert sorted(p.name for p in folder.iterdir()) == before


class _FillsAfter:
    """`os` for the run store, whose fsync fails with ENOSPC after `n` calls (a disk filling mid-run)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync(fd)


def test_an_injected_enospc_on_append_ends_the_run_with_code_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(store_module, "os", _FillsAfter(5))
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        assert main(_run_args(engine.url, tmp_path, "--allow-errors")) == 4
    folder = next(tmp_path.iterdir())
    kept = _check_failed_run(folder, "No space left on device (ENOSPC)", capsys.readouterr().err)
    assert kept == 6  # the sixth line reached the file; only its fsync failed
    monkeypatch.setattr(store_module, "os", os)
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        assert (
            main(["run", "--resume", str(folder), "--endpoint", engine.url, "--quiet", "--no-report", "--allow-errors"])
            == 0
        )
        assert len(engine.completion_calls()) == 16
    assert manifest_counts(folder) == (22, 22)


def test_an_unwritable_results_folder_is_one_line_and_code_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_mkdir = Path.mkdir

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        if self.is_relative_to(tmp_path):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", refuse)
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        assert main(_run_args(engine.url, tmp_path / "results")) == 4
        assert engine.completion_calls() == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Permission denied (EACCES)" in err[0]
