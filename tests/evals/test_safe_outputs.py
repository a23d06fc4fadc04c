"""Outputs that cannot destroy: every file ctxprobe writes for its user (report, JUnit, gate markdown, compare,
history, export) is written only as a regular file. A device node, a FIFO, a socket or a symbolic link standing at
the name is refused in one line (exit 2) and left exactly as it was; a read-only or full disk is one line with exit
4 (a named output or results folder on a read-only disk: exit 2, refused before the command runs). The device node and the disks are real ones the test makes (root, where this machine allows it)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.evals.report.synthetic_runs import small_suite, write_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    return (
        write_run(root / "base", small_suite(), label="base"),
        write_run(root / "cand", small_suite(), label="cand", seed=1, drop=0.2),
    )


def _mount(where: Path, options: str) -> Path:
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root)")
    return where


@pytest.fixture
def disks(tmp_path: Path, runs: tuple[Path, Path]) -> Iterator[dict[str, Path]]:
    """A read-only disk and a full one, each holding a copy of the two runs (for `history`, which writes
    beside the runs it reads)."""
    mounts = [_mount(tmp_path / f"{name}-{uuid.uuid4().hex[:6]}", "size=256k") for name in ("ro", "full")]
    ro, full = mounts
    try:
        for disk in mounts:
            for run in runs:
                shutil.copytree(run, disk / "runs" / run.name)
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        try:
            with (full / "fill").open("wb", buffering=0) as fh:
                while True:
                    fh.write(b"\0" * 4096)
        except OSError:  # full: what a user's disk is when ctxprobe comes to write
            pass
        yield {"read-only": ro, "full": full}
    finally:
        for mount in mounts:
            subprocess.run(["umount", "-l", str(mount)], check=False)


def _device(path: Path) -> Path:
    """A character device node with /dev/null's numbers, made here."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("cannot make a device node here (not root)")
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _socket(path: Path) -> Path:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()
    return path


def _link(path: Path) -> Path:
    target = path.with_name(path.name + ".target")
    target.write_text("someone else's file\n")
    path.symlink_to(target)
    return path


SPECIAL: dict[str, tuple[Callable[[Path], Path], str]] = {
    "device": (_device, "a character device"),
    "fifo": (_fifo, "a FIFO"),
    "socket": (_socket, "a socket"),
    "link": (_link, "a symbolic link"),
}


def _commands(runs: tuple[Path, Path], out: Path) -> dict[str, list[str]]:
    base, cand = runs
    return {
        "report": ["report", str(base), "-o", str(out)],
        "junit": ["compare", str(base), str(cand), "--junit", str(out), "--results-dir", str(out.parent / "cmp")],
        "summary-md": [
            "compare",
            str(base),
            str(cand),
            "--summary-md",
            str(out),
            "--results-dir",
            str(out.parent / "cmp"),
        ],
    }


def _one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("ctxprobe: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("kind", sorted(SPECIAL))
@pytest.mark.parametrize("command", ["report", "junit", "summary-md"])
def test_a_special_file_at_the_output_name_is_refused_and_left_as_it_was(
    runs: tuple[Path, Path], tmp_path: Path, kind: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make, what = SPECIAL[kind]
    out = make(tmp_path / "out")
    before = os.lstat(out)
    target = out.with_name("out.target")
    args = _commands(runs, out)[command]
    assert main(args) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{out} is {what}" in line  # refused before the command runs, naming the flag (or output)
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    if kind == "link":
        assert target.read_text() == "someone else's file\n"


@pytest.mark.parametrize("disk", ["read-only", "full"])
@pytest.mark.parametrize("command", ["report", "junit", "summary-md", "compare-folder", "history", "export"])
def test_an_output_on_a_disk_that_refuses_is_one_line_and_code_4(
    runs: tuple[Path, Path], disks: dict[str, Path], disk: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    where = disks[disk]
    base, cand = runs
    args = {
        **_commands(runs, where / "out.x"),
        "compare-folder": ["compare", str(base), str(cand), "--results-dir", str(where / "cmp")],
        "history": ["history", str(where / "runs")],
        "export": ["export", "quick", str(where / "exported"), "--token-counter", "estimate"],
    }[command]
    if command in ("junit", "summary-md"):  # the compare folder beside it goes where there is room
        args[args.index("--results-dir") + 1] = str(base.parent / f"cmp-{uuid.uuid4().hex[:6]}")
    if disk == "read-only" and command in ("report", "junit", "summary-md"):
        # a named output file in a folder that cannot be written is bad input, refused before the command runs
        assert main(args) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"the folder {where} is not writable" in line, line
    elif disk == "read-only" and command == "compare-folder":
        # so is a results folder where no folder can be made: exit 2 before the command runs, not 4 at its end
        assert main(args) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"no folder can be made in {where} (Read-only file system)" in line, line
    else:
        assert main(args) == 4
        line = _one_error_line(capsys.readouterr().err)
        reason = "Read-only file system" if disk == "read-only" else "No space left on device"
        assert "cannot write" in line and reason in line, line
    assert not [p for p in where.iterdir() if p.name.endswith(".tmp")]  # no half-written file left behind


def test_an_existing_regular_output_is_replaced_whole(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("old")
    assert main(["report", str(runs[0]), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and stat.S_ISREG(os.lstat(out).st_mode)
