"""A damaged line anywhere in samples.jsonl (blank, NULs, not UTF-8, torn mid-file, not a record) is skipped
with one warning naming the file and line; every other line is read, by every command that reads runs;
`ctxprobe check` lists the damage and `--repair` writes a clean copy beside the original, never over it."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.lines import CLEAN_COPY, DamagedLineWarning, parse_line, scan
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.store import RunStore
from tests.evals.compare.synthetic import all_right, write_run

GOOD = all_right()  # 40 records

DAMAGE = {
    "blank": (b"", "blank line"),
    "spaces": (b"   \t", "blank line"),
    "nuls": (b"\x00" * 512, "512 NUL bytes"),
    "nuls_then_json": (b"\x00\x00" + b'{"a": 1}', "2 NUL bytes"),
    "latin1": ('{"label": "caf\xe9"}'.encode("latin-1"), "not UTF-8 (byte 0xe9 at column 15)"),
    "torn": (b'{"schema_version": 2, "sample": {"sample_id": "ab', "invalid JSON"),
    "two_halves": (b'{"schema_version": 2, "sam{"schema_version": 2}', "invalid JSON"),
    "not_json": (b"hello world", "invalid JSON"),
    "json_list": (b"[1, 2, 3]", "not a sample record"),
    "json_wrong_shape": (b'{"schema_version": 2, "sample": 5}', "not a sample record (sample:"),
    "old_style_wrong": (b'{"sample": null}', "not a sample record"),
    "a_number": (b"42", "not a sample record"),
}


def _damage(run: Path, bad: bytes, at: int) -> list[bytes]:
    path = run / "samples.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    lines.insert(at, bad)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return lines


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_each_kind_of_damage_is_named(name: str) -> None:
    raw, reason = DAMAGE[name]
    parsed = parse_line(raw)
    assert isinstance(parsed, str) and parsed.startswith(reason)


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_line_mid_file_is_skipped_once_with_its_line_number(tmp_path: Path, name: str) -> None:
    run = write_run(tmp_path / "run", "a", GOOD)
    _damage(run, DAMAGE[name][0], 17)
    with pytest.warns(DamagedLineWarning, match=r"samples.jsonl: skipped 1 damaged line \(line 18: "):
        records = load_run(run).records
    assert len(records) == 40
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read again: nothing new to say
        assert len(RunStore(run).latest_records()) == 40


def test_check_lists_damage_and_repair_writes_a_clean_copy_beside_the_original(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", "a", GOOD)
    _damage(run, b"\x00" * 512, 3)
    _damage(run, b"", 30)
    with (run / "samples.jsonl").open("ab") as fh:
        fh.write(b'{"schema_version": 2, "sam')  # a kill mid-write: an unfinished last line
    before = hashlib.sha256((run / "samples.jsonl").read_bytes()).hexdigest()
    assert main(["check", str(run)]) == 1
    out = capsys.readouterr().out
    assert "40 records, 2 damaged lines, an unfinished last line 43" in out
    assert "line 4: 512 NUL bytes" in out and "line 31: blank line" in out
    assert not (run / CLEAN_COPY).exists()  # listing writes nothing

    assert main(["check", "--repair", str(run)]) == 1
    assert hashlib.sha256((run / "samples.jsonl").read_bytes()).hexdigest() == before  # never over the original
    clean = run / CLEAN_COPY
    found = scan(clean)
    assert len(found.records) == 40 and not found.damaged and found.torn_tail is None
    assert [json.loads(line)["sample"]["sample_id"] for line in clean.read_text().splitlines()] == [
        r.sample.sample_id for _, r in scan(run / "samples.jsonl").records
    ]
    assert main(["check", str(write_run(tmp_path / "fine", "b", GOOD))]) == 0


def test_every_reading_command_works_on_a_run_with_damaged_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    a = write_run(results / "20260101-000000-a", "a", GOOD, created=1.0)
    b = write_run(results / "20260102-000000-b", "b", GOOD, created=2.0)
    for run in (a, b):
        _damage(run, "\udcff".encode("utf-8", "surrogatepass"), 5)  # not UTF-8
        _damage(run, b"\x00" * 512, 20)
    assert main(["show", str(a)]) == 0
    err = capsys.readouterr().err
    assert err.count("ctxprobe: warning:") == 1 and "line 6: not UTF-8" in err and "line 21: 512 NUL bytes" in err
    assert main(["compare", str(a), str(b), "--results-dir", str(tmp_path / "cmp"), "--no-report"]) == 0
    assert main(["history", str(results)]) == 0
    assert main(["report", str(a), str(b), "-o", str(tmp_path / "page.html")]) == 0
    assert "ctxprobe: error" not in capsys.readouterr().err
