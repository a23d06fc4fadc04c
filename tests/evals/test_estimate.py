"""`--dry-run` / `ctxprobe.estimate`: the cost of a run before it runs, and nothing sent but one probe."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.run.estimate import deadline_warning
from ctxprobe.evals.run.prefill_cost import FILL_TOKENS, PrefillFit, fit_prefill_time
from ctxprobe.evals.run.send.order import expected_cached_tokens, send_groups
from ctxprobe.tasks.suite import Suite, load_suite
from tests.runners.fake_engine import FakeEngine

LING = str(Path(__file__).parent / "fixtures" / "ling_3_1_flash.json")
KL_SHARE = 0.125  # tasks/suites/nightly.yaml's, from benchmarks/bench_sequential.py --kl


def test_nightly_on_ling_counts_tokens_cache_time_and_fit() -> None:
    est = ctxprobe.estimate(
        suite="nightly-independent",
        prefill_rate=50_000.0,
        concurrency=64,
        config=LING,
        gpus=8,
        gpu_mem="141GB",
        weights="573.8GB",
        util="0.85",
    )
    assert est.samples == (7 * 11 + 1) * 6 * 8  # 7 tasks x 11 depths, and one absent question per length and seed
    assert est.prompt_tokens == sum(n * (7 * 11 + 1) * 8 for n in (32768, 65536, 131072, 262144, 524288, 1_000_000))
    # the paired gate's expected spend when nothing dropped, from the suite's measured shares
    shares = {"correct": 0.48, "p_answer": 0.30, "kl": KL_SHARE}
    assert est.paired_gate_tokens == {m: round(share * est.prompt_tokens) for m, share in shares.items()}
    assert [(row.metric, row.computed_prefill) for row in est.paired] == [
        (m, round(share * est.computed_prefill)) for m, share in shares.items()
    ]
    assert est.longest_prompt == 1_000_000
    # the 11-depth one-slot bound (45 of 110 depth-lengths of each sweep); the absent question at depth 50 follows the
    # present one there and reuses half its prompt
    assert est.cached_tokens / est.prompt_tokens == pytest.approx((7 * 45 / 10 + 0.5) / 78, abs=1e-3)
    assert est.cached_tokens_as_listed < est.cached_tokens  # 64 lanes scatter a listed depth sweep
    assert est.prefill_s == pytest.approx((est.prompt_tokens - est.cached_tokens) / 50_000.0)
    fit = {row.context_tokens: row.sequences_that_fit for row in est.lengths}
    assert fit[1_000_000] == 36 and fit[131072] == 237  # ctxprobe plan's figures for this config
    assert any("64 does not fit at 1,000,000" in w for w in est.warnings)
    assert not any("32,768" in w for w in est.warnings)


def test_dry_run_sends_only_three_short_probes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k,4k",
                "--depths",
                "0:100:25",
                "--dry-run",
                "--results-dir",
                str(tmp_path),
            ]
        )
        calls = engine.completion_calls()
    assert code == 0 and len(calls) == 4  # a warm-up, then the prefill-time probes at 1/8, 1/4 and 1/2 of 4K
    out = capsys.readouterr().out
    assert "10 samples" in out and "prefill probes: " in out and "expected prefill time (one stream): " in out
    assert out.startswith("engine vllm 0.33.0 at ") and "model fake-model, context 8,192 tokens a request" in out
    assert "tok/s" not in out  # the measured rate is not a second cost
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # no run folder
    with FakeEngine("vllm", context_length=8192) as engine:
        assert main(["run", "--endpoint", engine.url, "--family", "niah", "--dry-run", "--prefill-rate", "1000"]) == 0
        assert engine.completion_calls() == []


def test_the_capacity_suite_is_priced_cell_by_cell_after_its_facts_cap() -> None:
    est = ctxprobe.estimate(
        suite="capacity", prefill_rate=60_000.0, concurrency=64, endpoints=["http://127.0.0.1:9/v1"]
    )
    # cells kept by the cap: plain keys 5 at 8K (1024 facts left out), 6 at 32K and 128K; similar keys 4, 5, 6
    samples = {8192: (5 + 4) * 40, 32768: (6 + 5) * 40, 131072: (6 + 6) * 40}
    assert {row.context_tokens: row.samples for row in est.lengths} == samples
    assert est.samples == 1280 and est.prompt_tokens == 80_281_600 == sum(n * k for n, k in samples.items())
    assert est.cached_tokens == 0  # one depth, every seed its own window: no shared prefix
    assert est.prefill_s == pytest.approx(80_281_600 / 60_000)  # 1,338 s


def test_dry_run_of_the_nightly_prints_the_paired_gates_expected_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "nightly", "--dry-run", "--prefill-rate", "50000"]) == 0
    out = capsys.readouterr().out
    total = sum(n * (7 * 11 + 1) * 8 for n in (32768, 65536, 131072, 262144, 524288, 1_000_000))  # + absent needles
    assert f"{round(0.48 * total):,} gated on correct, {round(0.30 * total):,} gated on p_answer" in out


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({}, 1),  # the embedded engine: one slot unless told
        ({"parallel": 3}, 3),  # the slots ctxprobe starts it with
        ({"engine": "vllm"}, 4),  # vLLM states no slots: the run keeps 4 in flight, and so does the plan
        ({"engine": "vllm", "concurrency": 7}, 7),
        ({"endpoints": ["http://127.0.0.1:9"], "concurrency": 2}, 2),
    ],
)
def test_the_dry_run_plans_the_requests_in_flight_the_run_keeps(kwargs: dict[str, object], expected: int) -> None:
    """Decided by one function (`runners.response.in_flight`) for the dry run and the run alike."""
    assert ctxprobe.estimate(suite="quick", prefill_rate=1000.0, **kwargs).concurrency == expected


def test_a_probed_server_plans_its_own_slots_as_the_run_does(tmp_path: Path) -> None:
    """A llama-server stating 3 slots: the dry run's probe and the run both keep 3 requests in flight."""
    with FakeEngine("llama-server", context_length=8192, slots=3) as engine:
        est = ctxprobe.estimate(
            endpoints=[engine.url],
            family="niah",
            lengths="1k",
            depths="0,50,100",
            token_counter="estimate",
            results_dir=str(tmp_path),
        )
        run = ctxprobe.run(
            endpoints=[engine.url],
            family="niah",
            lengths="1k",
            depths="0,50,100",
            token_counter="estimate",
            mode="completions",
            results_dir=str(tmp_path),
            quiet=True,
            no_report=True,
        )
    assert est.concurrency == 3 and est.prefill_rate_source is not None
    assert run.exit_code == 0 and engine.peak_in_flight["completions"] <= 3


def _tail_tokens(family: str, params: dict[str, object], mode: str = "completions") -> int:
    """The question/tail of one drafted task, counted at 4 characters a token (the dry run's offline counter)."""
    from ctxprobe.tasks.registry import get_family, validate_params

    fam = get_family(family)
    draft = fam.draft(validate_params(fam, params), 50.0, mode, random.Random(0))
    return math.ceil(len(draft.tail) / 4)


def test_nested_and_independent_computed_prefill_by_hand() -> None:
    """niah at 1K and 2K, depths 0, 50, 100, two seeds, one lane. Independent: each depth sweep (one length and
    seed) deepest first reuses 50 % then 0 % of the length: 2.5 L computed of 3 L sent. Nested: each chain
    (one seed) computes its 2K stream once, each length's fill once and its six questions."""
    kw = dict(family="niah", lengths="1k,2k", depths="0,50,100", samples=2, prefill_rate=1000.0)
    sent = 2 * 3 * (1024 + 2048)
    independent = ctxprobe.estimate(**kw)
    nested = ctxprobe.estimate(layout="nested", **kw)
    assert independent.prompt_tokens == nested.prompt_tokens == sent
    assert independent.computed_prefill == 2 * 2.5 * (1024 + 2048) == nested.other_computed_prefill
    tail = _tail_tokens("niah", {})
    assert 5 < tail < 200
    chain = (2048 - FILL_TOKENS - tail) + 2 * FILL_TOKENS + 6 * tail
    assert nested.computed_prefill == 2 * chain == independent.other_computed_prefill
    assert nested.layout == "nested" and independent.other_layout == "nested"
    assert nested.cached_tokens == sent - nested.computed_prefill
    # the independent layout's figure is send.order's bound, unchanged
    recipes = Suite.model_validate(
        {"name": "x", "lengths": "1k,2k", "depths": "0,50,100", "samples": 2, "tasks": [{"family": "niah"}]}
    ).recipes(lambda mode: "estimate")
    total, cached = expected_cached_tokens(send_groups(recipes, "cache-aware"))
    assert (total, total - cached) == (sent, independent.computed_prefill)


def test_the_nightly_nested_computes_under_six_percent_of_what_it_sends() -> None:
    est = ctxprobe.estimate(suite="nightly", layout="nested", prefill_rate=50_000.0)
    tasks = load_suite("nightly").tasks
    present = [t for t in tasks if not t.params.get("absent")]
    absent = [t for t in tasks if t.params.get("absent")]
    assert (len(present), len(absent)) == (7, 1)
    assert (
        est.prompt_tokens
        == 1_257_864_192
        == sum(n * (7 * 11 + 1) * 8 for n in (32768, 65536, 131072, 262144, 524288, 1_000_000))
    )
    tails = [_tail_tokens(t.family, t.params, "chat") for t in present]
    # per chain (7 tasks x 8 seeds): the 1M stream, six fills, 66 questions; the absent needles ride niah single's
    # chains, one question per length: each costs its question alone
    floor = sum(8 * (1_000_000 - FILL_TOKENS - tail + 6 * FILL_TOKENS + 66 * tail) for tail in tails)
    floor += sum(8 * 6 * _tail_tokens(t.family, t.params, "chat") for t in absent)
    assert est.computed_prefill == floor
    assert est.computed_prefill / est.prompt_tokens <= 0.06
    # independent: the 11-depth one-slot bound (65 of 110 depth-lengths computed per sweep; an absent question at
    # depth 50 half its prompt), each request's reuse rounded down to a token
    assert est.other_computed_prefill == pytest.approx(est.prompt_tokens * (7 * 65 / 10 + 0.5) / 78, abs=est.samples)


@pytest.mark.parametrize("c_sign", [1.0, -1.0])
def test_the_prefill_time_fit_is_least_squares_with_a_nonnegative_square(c_sign: float) -> None:
    lengths = [1000, 2000, 4000, 8000]
    rng = np.random.default_rng(0)
    seconds = [0.05 + 2e-4 * n + c_sign * 3e-9 * n * n + float(rng.normal(0, 0.002)) for n in lengths]
    fit = fit_prefill_time(lengths, seconds)
    if c_sign > 0:
        c, b, a = np.polyfit(lengths, seconds, 2)
    else:  # a negative square is refused: the straight line's least squares
        (b, a), c = np.polyfit(lengths, seconds, 1), 0.0
    assert (fit.a, fit.b, fit.c) == pytest.approx((a, b, c), rel=1e-6, abs=1e-12)
    assert fit.time(8000) == pytest.approx(a + b * 8000 + c * 64e6)
    # a request that reuses 2,000 cached tokens of 8,000: the growth from 2,000 to 8,000, plus the fixed part
    assert fit.time(8000, 2000) == pytest.approx(a + b * 6000 + c * (64e6 - 4e6))
    assert fit.tokens_within(fit.time(5000)) == pytest.approx(5000, abs=1)


def test_the_fit_by_hand_and_its_refusals() -> None:
    exact = fit_prefill_time([1, 2, 3], [1 + 2 + 3, 1 + 4 + 12, 1 + 6 + 27])  # t = 1 + 2 L + 3 L^2
    assert (exact.a, exact.b, exact.c) == pytest.approx((1.0, 2.0, 3.0))
    line = fit_prefill_time([10, 20], [1.0, 2.0])  # two lengths: a line through both
    assert (line.a, line.b, line.c) == pytest.approx((0.0, 0.1, 0.0), abs=1e-12)
    falling = fit_prefill_time([10, 20, 30], [3.0, 2.0, 1.0])  # noise: time does not fall with length
    assert (falling.a, falling.b, falling.c) == (2.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="two lengths"):
        fit_prefill_time([10, 10], [1.0, 1.1])


def test_the_deadline_warning_by_hand() -> None:
    fit = PrefillFit(1.0, 1e-3, 0.0)  # 100,000 tokens: 101 s
    assert deadline_warning(fit, 100_000, 120.0 + 2.0 * 100, 120.0, 2.0) is None
    line = deadline_warning(fit, 100_000, 50.0, 10.0, 0.4)
    # covering 101 s at a quarter of the measured speed: 404 s over 100 thousand tokens
    assert (
        line is not None
        and "about 101 s" in line
        and "50 s deadline" in line
        and line.endswith("--timeout-per-1k 4.04")
    )


def test_a_slow_server_is_warned_of_its_deadline_with_the_flag_that_covers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fake server taking 0.2 ms a prompt token: probes of 512, 1,024 and 2,048 tokens fit about that line;
    a 4,096-token prompt (0.8 s) against a 0.5 s deadline is one warning, whose proposed --timeout-per-1k gives
    it the time at a quarter of the measured speed."""
    args = [
        "run",
        "--family",
        "niah",
        "--lengths",
        "1k,4k",
        "--depths",
        "0,100",
        "--dry-run",
        "--results-dir",
        str(tmp_path),
        "--timeout-per-1k",
        "0",
    ]
    with FakeEngine("vllm", context_length=8192, prefill_s_per_token=2e-4) as engine:
        assert main([*args, "--endpoint", engine.url, "--timeout", "0.5"]) == 0
        assert len(engine.completion_calls()) == 4
        out = capsys.readouterr().out
        assert main([*args, "--endpoint", engine.url, "--timeout", "60"]) == 0
        quiet = capsys.readouterr().out
    [warning] = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "4,096-token prompt" in warning and "--timeout 0.5" in warning
    proposed = float(warning.rsplit(" ", 1)[1])
    fitted = re.search(r"t = (\S+) \+ (\S+) L \+ (\S+) L\^2 s", out)
    assert fitted is not None
    a, b, c = (float(v) for v in fitted.groups())
    assert b == pytest.approx(2e-4, rel=0.5) and a < 0.2
    need = a + b * 4096 + c * 4096**2  # from the printed (rounded) coefficients: within 1 % of the fit's own
    assert need > 0.5 and proposed * 4.096 >= 0.99 * need / 0.25 and 1.01 * need / 0.25 > (proposed - 0.01) * 4.096
    assert "warning:" not in quiet


def test_the_fit_is_a_nonnegative_least_squares_checked_against_scipy() -> None:
    """Every part >= 0 and the least squares among such fits: the same coefficients as scipy's NNLS (an
    independent solver), on probes whose unconstrained fit has a negative fixed part or a negative square."""
    from scipy.optimize import nnls

    rng = np.random.default_rng(1)
    for _ in range(40):
        lengths = sorted(rng.choice(np.arange(500, 9000, 100), size=3, replace=False).tolist())
        seconds = [float(-0.5 + 3e-4 * n - 1e-8 * n * n + rng.normal(0, 0.2)) for n in lengths]
        fit = fit_prefill_time(lengths, seconds)
        scale = max(lengths)
        design = np.array([[1.0, n / scale, (n / scale) ** 2] for n in lengths])
        coef, _ = nnls(design, np.array(seconds))
        assert min(fit.a, fit.b, fit.c) >= 0
        assert (fit.a, fit.b * scale, fit.c * scale**2) == pytest.approx(tuple(coef), abs=1e-9)
    held = fit_prefill_time([1000, 2000, 4000], [-7.85 + 0.0199 * n for n in (1000, 2000, 4000)])
    assert held.a == 0.0 and held.held == ("fixed",)  # the negative fixed part: named, held at 0


def test_against_a_server_of_65536_tokens_whose_prefill_grows_with_the_square(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The nightly against a server stating 65,536 tokens: one line names the five lengths it cannot serve and
    what is left; the cost counts only 32K, one figure per layout with its range, the extrapolation said."""
    with FakeEngine("vllm", context_length=65536, prefill_s_per_square=1e-8) as engine:
        assert main(["run", "--endpoint", engine.url, "--suite", "nightly", "--dry-run"]) == 0
        probes = [engine.prompt_tokens(c.body) for c in engine.completion_calls()]
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("engine vllm 0.33.0 at http://127.0.0.1:") and "model fake-model" in lines[0]
    assert lines[1].startswith(
        "lengths: the engine serves at most 65,536 tokens a request (GET /v1/models "
        "max_model_len): it cannot serve lengths 65,536, 131,072, 262,144, 524,288, 1,000,000 "
        "(3,120 samples"
    )
    assert "that leaves 624 of the suite's 3,744 samples; the costs below count only what it serves" in lines[1]
    assert "suite nightly: 624 samples, 20,447,232 prompt tokens, longest prompt 32,768 tokens" in out
    assert len(probes) == 4 and max(probes) <= 4096  # the warm-up and three probes, none past 4K by default
    [cost] = [line for line in lines if line.startswith("expected prefill time")]
    figures = re.findall(r"([\d,.]+ [hs]) (?:\(range [^)]*\) )?in layout (\w+)", cost)
    assert [layout for _, layout in figures] == ["nested", "independent"]  # one figure per layout
    assert "tok/s" not in out and "fitted to the probes" not in out  # no second answer
    assert "carried 8.0x past its data" in out and "--probe-up-to 32768" in out


def test_probe_up_to_reaches_the_longest_served_prompt_and_no_further() -> None:
    with FakeEngine("vllm", context_length=65536, prefill_s_per_square=1e-9) as engine:
        est = ctxprobe.estimate(
            endpoints=[engine.url], family="niah", lengths="8k,16k,128k", depths="50", probe_up_to="1m"
        )
        probes = [engine.prompt_tokens(c.body) for c in engine.completion_calls()]
    assert est.unserved == [131072] and est.longest_prompt == 16384
    assert 16384 * 0.97 <= max(probes) <= 16384 and est.extrapolation == pytest.approx(1.0, abs=0.05)
    assert est.fit_range_s is not None and est.fit_s is not None


def test_an_engine_that_serves_none_of_the_lengths_is_not_probed(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=6000, prefill_s_per_square=1e-8) as engine:
        assert main(["run", "--endpoint", engine.url, "--suite", "nightly", "--dry-run"]) == 0
        assert engine.completion_calls() == []
    out = capsys.readouterr().out
    assert "that leaves nothing of the suite" in out and "nothing to cost" in out
    assert "paired run" not in out  # no zero costs printed for what is not served
