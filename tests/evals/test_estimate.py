"""`--dry-run` / `ctxprobe.estimate`: the cost of a run before it runs, and nothing sent but one probe."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine

LING = str(Path(__file__).parent / "fixtures" / "ling_3_1_flash.json")


def test_nightly_on_ling_counts_tokens_cache_time_and_fit() -> None:
    est = ctxprobe.estimate(suite="nightly", prefill_rate=50_000.0, concurrency=64, config=LING, gpus=8,
                            gpu_mem="141GB", weights="573.8GB", util="0.85")
    assert est.samples == 7 * 6 * 11 * 8
    assert est.prompt_tokens == sum(n * 7 * 11 * 8 for n in (32768, 65536, 131072, 262144, 524288, 1_000_000))
    # the paired gate's expected spend when nothing dropped, from the suite's measured shares
    assert est.paired_gate_tokens == {"correct": round(0.48 * est.prompt_tokens),
                                      "p_answer": round(0.30 * est.prompt_tokens)}
    assert est.longest_prompt == 1_000_000
    assert est.cached_tokens / est.prompt_tokens == pytest.approx(45 / 110, abs=1e-3)  # 11-depth one-slot bound
    assert est.cached_tokens_as_listed < est.cached_tokens  # 64 lanes scatter a listed depth sweep
    assert est.prefill_s == pytest.approx((est.prompt_tokens - est.cached_tokens) / 50_000.0)
    fit = {row.context_tokens: row.sequences_that_fit for row in est.lengths}
    assert fit[1_000_000] == 36 and fit[131072] == 237  # ctxprobe plan's figures for this config
    assert any("64 does not fit at 1,000,000" in w for w in est.warnings)
    assert not any("32,768" in w for w in est.warnings)


def test_dry_run_sends_only_one_short_probe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        code = main(["run", "--endpoint", engine.url, "--family", "niah", "--lengths", "1k,4k", "--depths", "0:100:25",
                     "--dry-run", "--results-dir", str(tmp_path)])
        calls = engine.completion_calls()
    assert code == 0 and len(calls) == 1  # the prefill-rate probe
    out = capsys.readouterr().out
    assert "10 samples" in out and "tok/s (measured" in out
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # no run folder
    with FakeEngine("vllm", context_length=8192) as engine:
        assert main(["run", "--endpoint", engine.url, "--family", "niah", "--dry-run", "--prefill-rate", "1000"]) == 0
        assert engine.completion_calls() == []


def test_the_capacity_suite_is_priced_cell_by_cell_after_its_facts_cap() -> None:
    est = ctxprobe.estimate(suite="capacity", prefill_rate=60_000.0, concurrency=64, endpoints=["http://127.0.0.1:9/v1"])
    # cells kept by the cap: plain keys 5 at 8K (1024 facts left out), 6 at 32K and 128K; similar keys 4, 5, 6
    samples = {8192: (5 + 4) * 40, 32768: (6 + 5) * 40, 131072: (6 + 6) * 40}
    assert {row.context_tokens: row.samples for row in est.lengths} == samples
    assert est.samples == 1280 and est.prompt_tokens == 80_281_600 == sum(n * k for n, k in samples.items())
    assert est.cached_tokens == 0  # one depth, every seed its own window: no shared prefix
    assert est.prefill_s == pytest.approx(80_281_600 / 60_000)  # 1,338 s


def test_dry_run_of_the_nightly_prints_the_paired_gates_expected_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "nightly", "--dry-run", "--prefill-rate", "50000"]) == 0
    out = capsys.readouterr().out
    total = sum(n * 7 * 11 * 8 for n in (32768, 65536, 131072, 262144, 524288, 1_000_000))
    assert f"{round(0.48 * total):,} gated on correct, {round(0.30 * total):,} gated on p_answer" in out


@pytest.mark.parametrize("kwargs, expected", [
    ({}, 1),  # the embedded engine: one slot unless told
    ({"parallel": 3}, 3),  # the slots ctxprobe starts it with
    ({"engine": "vllm"}, 4),  # vLLM states no slots: the run keeps 4 in flight, and so does the plan
    ({"engine": "vllm", "concurrency": 7}, 7),
    ({"endpoints": ["http://127.0.0.1:9"], "concurrency": 2}, 2),
])
def test_the_dry_run_plans_the_requests_in_flight_the_run_keeps(kwargs: dict[str, object], expected: int) -> None:
    """Decided by one function (`runners.response.in_flight`) for the dry run and the run alike."""
    assert ctxprobe.estimate(suite="quick", prefill_rate=1000.0, **kwargs).concurrency == expected


def test_a_probed_server_plans_its_own_slots_as_the_run_does(tmp_path: Path) -> None:
    """A llama-server stating 3 slots: the dry run's probe and the run both keep 3 requests in flight."""
    with FakeEngine("llama-server", context_length=8192, slots=3) as engine:
        est = ctxprobe.estimate(endpoints=[engine.url], family="niah", lengths="1k", depths="0,50,100",
                                token_counter="estimate", results_dir=str(tmp_path))
        run = ctxprobe.run(endpoints=[engine.url], family="niah", lengths="1k", depths="0,50,100",
                           token_counter="estimate", mode="completions", results_dir=str(tmp_path), quiet=True,
                           no_report=True)
    assert est.concurrency == 3 and est.prefill_rate_source is not None
    assert run.exit_code == 0 and engine.peak_in_flight["completions"] <= 3
