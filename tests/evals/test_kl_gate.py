"""The paired gate on KL (`--metric kl`, `evals.paired.kl_gate`): the scaling by hand, each verdict's error
rate by simulation at the null's edge (the worst case for each direction), how many pairs it needs for a
divergence like q4_0's and for an equal build, and `run --against --metric kl` driven through the plan's own
rounds with records whose top-k lists come from known distributions (`tests.evals.compare.kl_runs`)."""

from pathlib import Path

import numpy as np
import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.against import gate_cases, gate_report, paired_run, render_gate
from ctxprobe.evals.compare.paired import kl_gate
from ctxprobe.evals.compare.paired.kl_gate import CAP_TIMES, KL_MARGIN, ROW_MARGIN
from ctxprobe.evals.compare.sequential.gate import decide
from ctxprobe.tasks.errors import UserError
from tests.evals.compare.kl_runs import answer_logprobs, base_dists, shifted, write_logprob_run
from tests.evals.compare.synthetic import DEPTHS, LENGTHS, record
from tests.evals.test_run_against_p_answer import _play

ALPHA = 0.05


def test_a_pairs_kl_is_scaled_to_a_loss_capped_at_ten_margins():
    assert kl_gate.scaled(0.0, 0.01) == 0.0
    assert kl_gate.scaled(0.05, 0.01) == pytest.approx(-0.5)
    assert kl_gate.scaled(0.1, 0.01) == pytest.approx(-1.0)
    assert kl_gate.scaled(7.0, 0.01) == -1.0  # past the cap: counted as the cap
    assert kl_gate.scaled(0.05, 0.02) == pytest.approx(-0.25)
    assert kl_gate.in_nats(-0.5, 0.01) == pytest.approx(0.05)
    assert kl_gate.nats_interval(-0.6, -0.2, 0.01) == pytest.approx((0.02, 0.06))  # the bounds swap
    assert pytest.approx(1 / CAP_TIMES) == ROW_MARGIN
    with pytest.raises(ValueError, match="--kl-margin"):
        kl_gate.check_margin(0.0)


def _sequential(kls: np.ndarray, look: int = 10) -> tuple[str, int]:
    """One gate row fed `kls` (nats) `look` pairs at a time, judged after each look: (verdict, pairs used)."""
    row = kl_gate.kl_row(primary=True)
    for i in range(0, len(kls), look):
        row.add_diffs([kl_gate.scaled(float(v), KL_MARGIN) for v in kls[i : i + look]], ROW_MARGIN)
        [verdict] = decide([row], ROW_MARGIN, ALPHA)
        if verdict is not None:
            return verdict, row.tally.n
    return "UNDECIDED", row.tally.n


def _rates(draw, reps: int, n: int = 300, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    verdicts = [_sequential(draw(rng, n))[0] for _ in range(reps)]
    return {v: verdicts.count(v) / reps for v in ("FAIL", "PASS", "UNDECIDED")}


# The fast tier plays the first 100 of each simulation's 300 seeded rows (all 300 are marked `slow`). At 100
# a rate passes with 5 errors or fewer: a gate that erred 15 % of the time would pass with probability 0.16 %
# (at 300, with 15 or fewer: a gate at 10 % passes with probability 0.13 %).
REPS = [100, pytest.param(300, marks=pytest.mark.slow)]


@pytest.mark.parametrize("reps", REPS)
def test_false_fail_at_most_alpha_when_the_mean_kl_is_the_margin(reps):
    """FAIL's null is "mean KL <= margin": at its edge (mean exactly the margin), for a light and a heavy
    tail, the gate FAILs at most alpha of the time however long it looks (300 pairs, a look every 10)."""
    light = _rates(lambda rng, n: rng.gamma(2.0, KL_MARGIN / 2.0, n), reps)
    heavy = _rates(lambda rng, n: rng.gamma(0.3, KL_MARGIN / 0.3, n), reps, seed=1)
    assert light["FAIL"] <= ALPHA and heavy["FAIL"] <= ALPHA


@pytest.mark.parametrize("reps", REPS)
def test_false_pass_at_most_alpha_when_the_capped_mean_is_the_margin(reps):
    """PASS's null is "capped mean KL >= margin". The hardest law there for a bettor on "below": most pairs
    exactly 0 and a tenth at the cap (capped mean = the margin), and a smooth one at the margin."""
    cap = CAP_TIMES * KL_MARGIN
    two_point = _rates(lambda rng, n: np.where(rng.random(n) < KL_MARGIN / cap, 5 * cap, 0.0), reps)  # beyond the cap
    smooth = _rates(lambda rng, n: rng.gamma(2.0, KL_MARGIN / 2.0, n), reps, seed=2)
    assert two_point["PASS"] <= ALPHA and smooth["PASS"] <= ALPHA


def test_a_q4_0_like_divergence_fails_fast_and_an_equal_build_passes():
    """KL like the real q4_0 KV cache's against f16 (mean 0.04 nats, here.) FAILs; like a second f16 engine
    instance's (0.002) PASSes; a build at half the margin is undecided more often, neither wrongly."""
    rng = np.random.default_rng(3)
    q4 = [_sequential(rng.gamma(2.0, 0.04 / 2.0, 300)) for _ in range(200)]
    equal = [_sequential(rng.gamma(2.0, 0.002 / 2.0, 300)) for _ in range(200)]
    assert all(v == "FAIL" for v, _ in q4) and np.median([n for _, n in q4]) <= 20
    assert all(v == "PASS" for v, _ in equal) and np.median([n for _, n in equal]) <= 70


def _keys(seeds: int) -> list:
    return [(n, d, s) for n in LENGTHS for d in DEPTHS for s in range(seeds)]


def _candidate(amount: float):
    def answer(key):
        return record(key, True).model_copy(
            update={"logprobs": answer_logprobs(shifted(base_dists(key), amount, key), k=8)}
        )

    return answer


def _base(tmp_path: Path, seeds: int = 40) -> Path:
    return write_logprob_run(tmp_path / "base", "f16", lambda key: answer_logprobs(base_dists(key), k=8), _keys(seeds))


def test_run_against_on_kl_fails_a_divergent_build_early_and_passes_an_equal_one(tmp_path):
    base = _base(tmp_path)
    plan = paired_run(base, 0.05, ALPHA, "estimate:4", metric="kl")
    done = _play(plan, _candidate(0.6))
    report = gate_report(plan)
    pooled = next(e for e in report["rows"] if e["primary"])
    assert report["metric"] == "kl" and report["verdict"] == "FAIL" and pooled["verdict"] == "FAIL"
    assert pooled["diff"] > KL_MARGIN and pooled["diff_lo"] > KL_MARGIN  # nats, the interval above the margin
    assert len(done) <= 20  # of the baseline's 160
    assert [b["metric"] for b in pooled["beside"]] == ["correct", "p_answer"]
    text = render_gate(report)
    assert f"(--kl-margin {KL_MARGIN:g} --metric kl): FAIL" in text and "kl is the mean KL in nats" in text
    assert gate_cases(report, "q4_0")[0].message().startswith("FAIL on kl: mean ")

    plan = paired_run(base, 0.05, ALPHA, "estimate:4", metric="kl")
    done = _play(plan, _candidate(0.01))
    report = gate_report(plan)
    pooled = next(e for e in report["rows"] if e["primary"])
    assert report["verdict"] == "PASS" and pooled["diff_hi"] < KL_MARGIN and len(done) <= 80


def test_kl_is_beside_the_correctness_gate_where_the_records_have_top_k_lists(tmp_path):
    base = _base(tmp_path, seeds=5)
    plan = paired_run(base, 0.05, ALPHA, "estimate:4")
    _play(plan, _candidate(0.6))
    pooled = next(e for e in gate_report(plan)["rows"] if e["primary"])
    kl = next(b for b in pooled["beside"] if b["metric"] == "kl")
    assert kl["n"] == 20 and kl["diff"] > KL_MARGIN and "kl 0.0" in render_gate(gate_report(plan))


def test_a_baseline_without_top_k_lists_is_refused_for_kl(tmp_path, capsys):
    from tests.evals.compare.synthetic import all_right, write_run

    plain = write_run(tmp_path / "plain", "f16", all_right(), p_answer={k: 0.5 for k in all_right()})
    with pytest.raises(UserError, match="no answer log-probabilities with top-k"):
        paired_run(plain, 0.05, ALPHA, "estimate:4", metric="kl")
    with pytest.raises(UserError, match="--kl-margin must be a positive number"):
        paired_run(plain, 0.05, ALPHA, "estimate:4", metric="kl", kl_margin=-1.0)
    assert main(["run", "--kl-margin", "0.02", "--quiet", "--results-dir", str(tmp_path / "out")]) == 2
    assert "--kl-margin need" in capsys.readouterr().err


def test_a_paired_gate_written_before_kl_still_renders(tmp_path):
    """Manifests written before KL hold `beside` as one dict and no kl_margin: the table reads them as they are."""
    old = {
        "baseline": "b",
        "margin": 0.05,
        "alpha": 0.05,
        "metric": "correct",
        "method": "m",
        "verdict": "PASS",
        "rows": [
            {
                "family": "niah",
                "params": {},
                "haystack": "prose",
                "context_tokens": 0,
                "primary": True,
                "verdict": "PASS",
                "n": 100,
                "baseline_samples": 100,
                "baseline_extended": 0,
                "losses": 0,
                "wins": 0,
                "diff": 0.0,
                "diff_lo": -0.049,
                "diff_hi": 0.049,
                "p_fail": 1.0,
                "p_pass": 0.04,
                "rounds": 10,
                "lacking_p_answer": 0,
                "beside": {"metric": "p_answer", "n": 100, "diff": -0.001, "diff_lo": -0.05, "diff_hi": 0.048},
            }
        ],
    }
    text = render_gate(old)
    assert "(--fail-if-drop 0.05): PASS" in text and "p_answer -0.1 [-5.0, +4.8] 100" in text
    assert "p_answer: diff -0.1 points" in gate_cases(old, "f16b")[0].message()


def test_the_default_margin_is_floor_times_the_cache_path_noise_floor(monkeypatch):
    assert pytest.approx(kl_gate.FLOOR_TIMES * kl_gate.CACHE_PATH_FLOOR) == KL_MARGIN
    assert kl_gate.margin_option("x").default == KL_MARGIN  # what compare, history and run --against default to
    assert kl_gate.margin_for_floor(0.004) == pytest.approx(2 * kl_gate.margin_for_floor(0.002))
    monkeypatch.setattr(kl_gate, "FLOOR_TIMES", 3.0)
    assert kl_gate.margin_for_floor(0.002) == pytest.approx(0.006)  # the multiple, not a fixed number
    for bad in (0.0, -0.001, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="noise floor"):
            kl_gate.margin_for_floor(bad)


def test_a_runs_own_floor_above_the_margins_warns():
    floor = kl_gate.CACHE_PATH_FLOOR
    assert kl_gate.floor_warning("f16", None, KL_MARGIN) is None  # no control, no log-probabilities: nothing
    assert kl_gate.floor_warning("f16", floor, KL_MARGIN) is None  # the floor the default was set from
    line = kl_gate.floor_warning("f16", 2 * floor, KL_MARGIN)
    assert line is not None and line.startswith("NOISE FLOOR: f16's") and f"{2 * floor:.3g}" in line
    assert f"{kl_gate.margin_for_floor(2 * floor):.3g} nats" in line
    assert kl_gate.floor_warning("f16", 2 * floor, kl_gate.margin_for_floor(2 * floor)) is None  # a wide margin
