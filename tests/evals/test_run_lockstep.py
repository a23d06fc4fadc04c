"""`ctxprobe run --against BASELINE --baseline-endpoint URL --max-samples N` against fake engines (the
baseline endpoint and the candidate are two servers; a fake is what lets a test count each one's calls):
when the baseline run holds too few samples for a row to be decided, the baseline endpoint is sent the
missing ones in lockstep with the candidate, the same ids, kept in the paired run's own
`baseline-extension/` folder; the baseline run is left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from tests.evals.test_run_against import _baseline, _gate
from tests.evals.test_run_sequential import _finds_the_needle
from tests.runners.fake_engine import FakeEngine


def _ids(calls: list) -> list[str]:
    return sorted(c.body.get("prompt") or json.dumps(c.body.get("messages")) for c in calls)


def test_the_baseline_endpoint_extends_the_baseline_in_lockstep(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, samples=2)  # 8 samples: too few to PASS at this margin
    before = (baseline / "samples.jsonl").read_bytes(), (baseline / "manifest.json").read_bytes()
    with (
        FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as base_engine,
        FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as cand_engine,
    ):
        code = main(
            [
                "run",
                "--endpoint",
                cand_engine.url,
                "--against",
                str(baseline),
                "--fail-if-drop",
                "0.2",
                "--baseline-endpoint",
                base_engine.url,
                "--max-samples",
                "40",
                "--quiet",
                "--no-report",
                "--label",
                "cand",
                "--results-dir",
                str(tmp_path / "cand"),
            ]
        )
        base_calls, cand_calls = base_engine.completion_calls(), cand_engine.completion_calls()
    assert code == 0
    gate = _gate(tmp_path / "cand")
    pooled = next(r for r in gate["rows"] if r["primary"])
    assert gate["verdict"] == "PASS" and pooled["verdict"] == "PASS"
    # the pooled row needed more pairs than the baseline held, and far fewer than the cap allows
    assert pooled["baseline_samples"] == 8 < pooled["n"] < 4 * 40
    assert pooled["n"] == 8 + pooled["baseline_extended"] == gate["baseline_extended"] + 8
    # lockstep: every prompt the baseline endpoint was sent, the candidate was sent too (the same text)
    assert len(base_calls) == gate["baseline_extended"] and set(_ids(base_calls)) <= set(_ids(cand_calls))
    run_dir = next((tmp_path / "cand").iterdir())
    ext = load_run(run_dir / "baseline-extension")
    cand_ids = {r.sample.sample_id for r in load_run(run_dir).records}
    ext_ids = {r.sample.sample_id for r in ext.records}
    assert len(ext_ids) == len(base_calls) and ext_ids <= cand_ids
    assert not ext_ids & {r.sample.sample_id for r in load_run(baseline).records}  # new seeds only
    assert ext.manifest.status == "finished" and ext.manifest.samples_done == len(ext_ids)
    # the baseline run itself is untouched
    assert ((baseline / "samples.jsonl").read_bytes(), (baseline / "manifest.json").read_bytes()) == before


def test_baseline_endpoint_needs_against_and_a_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = _baseline(tmp_path, samples=1)
    args = ["run", "--baseline-endpoint", "http://127.0.0.1:9", "--quiet", "--results-dir", str(tmp_path / "x")]
    assert main([*args, "--against", str(baseline), "--fail-if-drop", "0.1"]) == 2
    assert "--baseline-endpoint needs --max-samples" in capsys.readouterr().err
    assert main([*args, "--family", "niah", "--lengths", "1k"]) == 2
    assert "--baseline-endpoint needs --against" in capsys.readouterr().err


def test_a_resumed_lockstep_run_sends_neither_side_twice(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, samples=2)
    args = ["--against", str(baseline), "--fail-if-drop", "0.2", "--max-samples", "40", "--quiet", "--no-report"]
    with (
        FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as base_engine,
        FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as cand_engine,
    ):
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    cand_engine.url,
                    "--baseline-endpoint",
                    base_engine.url,
                    *args,
                    "--label",
                    "cand",
                    "--results-dir",
                    str(tmp_path / "cand"),
                ]
            )
            == 0
        )
        whole = _gate(tmp_path / "cand")
        base_first, cand_first = len(base_engine.completion_calls()), len(cand_engine.completion_calls())
        # As if killed mid-run: the candidate kept its first 10 samples, the baseline extension all of its own.
        run_dir = next((tmp_path / "cand").iterdir())
        samples = run_dir / "samples.jsonl"
        samples.write_text("\n".join(samples.read_text().splitlines()[:10]) + "\n")
        manifest = json.loads((run_dir / "manifest.json").read_text())
        (run_dir / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
        assert (
            main(
                [
                    "run",
                    "--resume",
                    str(run_dir),
                    "--endpoint",
                    cand_engine.url,
                    "--baseline-endpoint",
                    base_engine.url,
                    "--quiet",
                    "--no-report",
                ]
            )
            == 0
        )
        base_again = len(base_engine.completion_calls()) - base_first
        cand_again = len(cand_engine.completion_calls()) - cand_first
    assert base_again == 0  # the extension's samples are all there: none sent to the baseline again
    assert cand_again == cand_first - 10  # the same rounds: only the candidate samples not kept
    assert _gate(tmp_path / "cand")["verdict"] == whole["verdict"] == "PASS"
