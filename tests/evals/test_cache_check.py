"""The cache-path control's parts: which requests are chosen (seeded, every length checked, within the cost
rule where it can be), the decision rule (a one-sided paired sign test checked against scipy's binomtest and a
hand count, and the KL noise floor), and the records (typed, versioned, read back)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from ctxprobe.evals.compare.cache_path import KL_NOISE_FLOOR, decide, sign_test_p
from ctxprobe.evals.records.cache_check import (
    CACHE_CHECK_VERSION,
    CACHE_CHECKS_FILE,
    CacheCheck,
    CacheCheckRecord,
    append_check,
    cold_id,
    read_checks,
)
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.schema import SCHEMA_VERSION
from ctxprobe.evals.run.cache_check import COST_SHARE, MIN_CHECKS, check_tokens, choose, parse_cache_check, servable
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import chain_key
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite

SUITE = {"name": "s", "lengths": ["1k"], "depths": "50", "tasks": [{"family": "niah"}]}


def recipes(lengths: list[str], depths: str, samples: int, layout: str = "nested") -> list[Recipe]:
    suite = Suite.model_validate(
        {
            "name": "s",
            "lengths": lengths,
            "depths": depths,
            "samples": samples,
            "layout": layout,
            "tasks": [{"family": "niah"}],
        }
    )
    return suite.recipes(lambda mode: "estimate:4")


def test_servable_is_every_request_but_each_chains_first() -> None:
    todo = recipes(["1k", "2k"], "0:100:50", 2)
    served = servable(todo)
    assert len(todo) == 12 and len(served) == 10
    assert len({chain_key(r) for r in todo}) == 2
    kept = {r.sample_id() for r in served}
    assert all(r.context_tokens == 1024 and r.depth == 0.0 for r in todo if r.sample_id() not in kept)


def test_auto_checks_every_length_and_keeps_to_the_share_past_the_floor() -> None:
    todo = recipes(["1k", "2k", "4k"], "0:100:25", 200)
    computed = 200 * (4096 + 15 * 30)  # about a chain's longest stream and its questions, per chain
    chosen = choose(todo, "auto", seed=0, computed_prefill=computed)
    per = Counter(r.context_tokens for r in chosen)
    assert set(per) == {1024, 2048, 4096} and min(per.values()) >= 2 and len(chosen) >= MIN_CHECKS
    assert check_tokens(chosen) <= COST_SHARE * computed
    again = choose(recipes(["1k", "2k", "4k"], "0:100:25", 200), "auto", seed=0, computed_prefill=computed)
    assert [r.sample_id() for r in again] == [r.sample_id() for r in chosen]  # the same on resume, anywhere
    assert chosen != choose(todo, "auto", seed=1, computed_prefill=computed)


def test_auto_keeps_the_one_per_length_floor_even_past_the_share() -> None:
    todo = recipes(["1k", "2k"], "0:100:50", 2)
    chosen = choose(todo, "auto", seed=0, computed_prefill=4000)  # 3 % is 120 tokens: only the floor
    assert sorted(r.context_tokens for r in chosen) == [1024, 2048]


def test_a_share_takes_that_share_of_each_length_and_off_none() -> None:
    todo = recipes(["1k", "2k"], "0:100:25", 4)  # servable: 1K 4*5-4=16, 2K 20
    chosen = choose(todo, "0.5", seed=3, computed_prefill=0)
    assert Counter(r.context_tokens for r in chosen) == {1024: 8, 2048: 10}
    assert choose(todo, "off", seed=3, computed_prefill=0) == []
    assert len(choose(todo, "1", seed=3, computed_prefill=0)) == len(servable(todo))


@pytest.mark.parametrize("bad", ["0", "1.5", "-0.1", "often", "nan"])
def test_a_bad_share_is_one_line(bad: str) -> None:
    with pytest.raises(UserError, match="--cache-check"):
        parse_cache_check(bad)


def test_parse_keeps_auto_off_and_shares() -> None:
    assert [parse_cache_check(v) for v in ("auto", "OFF", "0.05", "1", None)] == ["auto", "off", "0.05", "1", None]


def _hand_p(b: int, c: int) -> float:
    n = b + c
    return sum(math.comb(n, k) for k in range(b, n + 1)) / 2**n


@pytest.mark.parametrize(("b", "c"), [(0, 0), (5, 0), (4, 0), (7, 2), (3, 3), (0, 6), (12, 5), (30, 18)])
def test_the_sign_test_is_scipys_one_sided_binomial_test(b: int, c: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    p = sign_test_p(b, c)
    assert p == pytest.approx(_hand_p(b, c) if b + c else 1.0, rel=1e-12)
    if b + c:
        assert p == pytest.approx(stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue, rel=1e-9)


def _check(
    i: int, cached: bool, cold: bool, *, length: int = 1024, kl: float | None = None, same_text: bool = False
) -> CacheCheckRecord:
    return CacheCheckRecord(
        sample_id=f"s{i}",
        cold_id=cold_id(f"s{i}"),
        chain="c",
        context_tokens=length,
        depth=50.0,
        how="cache_salt",
        cached_text="1" if cached else "2",
        cached_correct=cached,
        cold_text=("1" if cold else "2") if not same_text else "x",
        cold_correct=cold,
        kl=kl,
    )


def _decide(checks: list[CacheCheckRecord], chosen: int | None = None) -> CacheCheck:
    ids = [c.sample_id for c in checks] + [f"left{i}" for i in range((chosen or len(checks)) - len(checks))]
    return decide(checks, chosen=ids, engine="vllm", how="cache_salt", asked="auto")


def test_one_way_differences_past_the_test_are_a_fault_and_balanced_ones_are_not() -> None:
    fault = _decide([_check(i, False, True) for i in range(5)] + [_check(9, True, True, length=2048)])
    assert fault.verdict == "fault" and fault.p_value == pytest.approx(1 / 32)
    assert fault.differed == 5 and fault.checked == 6
    assert [(r.context_tokens, r.checked, r.differed) for r in fault.per_length] == [(1024, 5, 5), (2048, 1, 0)]
    four = _decide([_check(i, False, True) for i in range(4)])  # p = 1/16: counted, not decided
    assert four.verdict == "differs" and four.differed == 4
    flips = _decide([_check(i, False, True) for i in range(6)] + [_check(10 + i, True, False) for i in range(6)])
    assert flips.verdict == "differs" and flips.p_value > 0.5  # a healthy engine's greedy flips, both ways
    agrees = _decide([_check(i, True, True) for i in range(8)])
    assert agrees.verdict == "agrees" and agrees.differed == 0 and "agrees" in agrees.line()


def test_with_logprobs_the_kl_must_pass_the_noise_floor_too() -> None:
    quiet = _decide([_check(i, False, True, kl=KL_NOISE_FLOOR / 10) for i in range(8)])
    assert quiet.verdict == "differs" and quiet.kl_noise_floor == KL_NOISE_FLOOR
    loud = _decide([_check(i, False, True, kl=2.0) for i in range(8)])
    assert loud.verdict == "fault" and loud.kl_max == 2.0 and "ENGINE FAULT" in loud.line()


def test_a_text_difference_alone_is_counted_and_unsent_checks_are_unchecked() -> None:
    found = _decide([_check(0, True, True, same_text=True), _check(1, True, True)], chosen=5)
    assert found.differed == 1 and found.verdict == "differs" and found.unchecked == 3 and found.chosen == 5
    errored = CacheCheckRecord(
        sample_id="e",
        cold_id=cold_id("e"),
        chain="c",
        context_tokens=1024,
        depth=0.0,
        how="cache_salt",
        cached_text="1",
        cached_correct=True,
        error="HTTP 500",
    )
    assert _decide([errored]).verdict == "unchecked"


def test_records_are_versioned_and_read_back(tmp_path: Path) -> None:
    check = _check(1, False, True, kl=0.5)
    append_check(tmp_path, check)
    append_check(tmp_path, check.model_copy(update={"kl": 0.25}))  # the latest line of a check wins
    with (tmp_path / CACHE_CHECKS_FILE).open("a") as fh:
        fh.write('{"sample_id": "torn"')  # cut off mid-write
    back = read_checks(tmp_path)
    assert list(back) == ["s1"] and back["s1"].kl == 0.25 and back["s1"].schema_version == SCHEMA_VERSION
    summary = _decide([check])
    manifest = RunManifest.model_validate({"suite": SUITE, "cache_check": summary.model_dump(mode="json")})
    assert manifest.cache_check == summary and manifest.cache_check.version == CACHE_CHECK_VERSION
    assert RunManifest.model_validate({"suite": SUITE}).cache_check is None


def test_the_dry_run_counts_the_controls_prefill() -> None:
    import ctxprobe
    from ctxprobe.evals.run.estimate import render_estimate

    est = ctxprobe.estimate(
        family="niah",
        lengths="1k,2k",
        depths="0:100:25",
        samples=160,
        layout="nested",
        prefill_rate=1000.0,
        token_counter="estimate:4",
    )
    todo = recipes(["1k", "2k"], "0:100:25", 160)
    chosen = choose(todo, "auto", seed=0, computed_prefill=est.computed_prefill)
    assert est.cache_check == "auto" and est.cache_check_requests == len(chosen) >= MIN_CHECKS
    assert est.cache_check_tokens == check_tokens(chosen) <= COST_SHARE * est.computed_prefill
    assert est.cache_check_s == pytest.approx(est.cache_check_tokens / 1000.0)
    assert "cache-path control (--cache-check auto): " in render_estimate(est)
    off = ctxprobe.estimate(
        family="niah", lengths="1k,2k", depths="0:100:25", samples=2, prefill_rate=1000.0, token_counter="estimate:4"
    )
    assert off.cache_check == "off" and off.cache_check_requests == 0 and "cache-path" not in render_estimate(off)
