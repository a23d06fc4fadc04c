import itertools
import math
import random
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from ctxprobe.evals.limit.search import LimitConfig, find_effective_length, full_grid, judge_length

K = 1024


class ScriptedCurve:
    """A deterministic endpoint: each sample at a length is a Bernoulli draw with the curve's true
    accuracy there, from a random stream of its own per length (so results don't depend on order)."""

    def __init__(self, curve: Callable[[int], float], seed: int = 0, scored: float = 1.0) -> None:
        self.curve, self.seed, self.scored = curve, seed, scored
        self.streams: dict[int, random.Random] = {}
        self.calls: list[tuple[int, int]] = []

    def __call__(self, length: int, n_more: int) -> tuple[int, int]:
        self.calls.append((length, n_more))
        rng = self.streams.setdefault(length, random.Random(f"{self.seed}:{length}"))
        trials = round(n_more * self.scored)
        return sum(rng.random() < self.curve(length) for _ in range(trials)), trials


def step_at(edge: int, high: float = 0.97, low: float = 0.3) -> Callable[[int], float]:
    return lambda length: high if length < edge else low


def logistic(mid: int, top: float = 0.99, bottom: float = 0.05, steep: float = 3.0) -> Callable[[int], float]:
    """Accuracy falling smoothly in log-length around `mid`."""
    return lambda length: bottom + (top - bottom) / (1 + math.exp(steep * (math.log2(length) - math.log2(mid))))


def config(**kw) -> LimitConfig:
    """The search these tests measure: 50 samples per length at most, 10 at a time."""
    return LimitConfig(**{"min_length": 4 * K, "max_length": 1024 * K, "max_samples": 50, "batch": 10, **kw})


@pytest.mark.parametrize("seed", range(5))
def test_step_curve_is_bracketed_within_ratio(seed):
    edge = 100_000
    result = find_effective_length(ScriptedCurve(step_at(edge), seed), config())
    passing, failing = result.bracket
    assert passing < edge <= failing and failing / passing <= 1.25
    assert result.effective == passing and result.first_failing == failing
    assert all(x % 256 == 0 for x in (passing, failing))
    row = next(r for r in result.lengths if r.length == passing)
    said = "95%" if _cp_lower(row.successes, row.n) > 0.856 else "a point estimate at the 50-sample cap, not 95%"
    assert result.verdict.startswith(f"effective ≥ {passing:,} ({said}")
    assert f"drops below 0.856 between {passing:,} and {failing:,}" in result.verdict


def _cp_lower(successes: int, n: int, confidence: float = 0.95) -> float:
    """The Clopper-Pearson lower bound, from scipy's beta quantile (not ctxprobe's own)."""
    from scipy.stats import beta

    return 0.0 if successes == 0 else float(beta.ppf((1 - confidence) / 2, successes, n - successes + 1))


@pytest.mark.parametrize("seed", range(12))
def test_the_verdict_claims_95_percent_only_where_the_interval_cleared_the_bar(seed):
    """Near the threshold the 50-sample cap decides on the point estimate: the verdict then says so, and the
    interval it gives, instead of "(95%)"."""
    result = find_effective_length(ScriptedCurve(step_at(100_000, high=0.9), seed), config())
    assert result.effective is not None
    row = next(r for r in result.lengths if r.length == result.effective)
    settled = _cp_lower(row.successes, row.n) > 0.856
    head = result.verdict.split(";")[0]
    assert ("(95%)" in head) == settled, (head, row)
    if not settled:
        assert "point estimate at the 50-sample cap, not 95%" in head and f"over {row.n}" in head


def test_search_order_climbs_then_bisects():
    curve = ScriptedCurve(step_at(100_000))
    result = find_effective_length(curve, config())
    order = [r.length for r in result.lengths]
    assert order[:6] == [4 * K, 8 * K, 16 * K, 32 * K, 64 * K, 128 * K]
    assert order[6] == round(math.sqrt(64 * K * 128 * K) / 256) * 256
    assert result.requests == sum(n for _, n in curve.calls) == sum(r.requests for r in result.lengths)


def test_never_drops():
    result = find_effective_length(ScriptedCurve(lambda _: 0.99), config(max_length=300_000))
    assert result.effective == 300_000 and result.bracket is None and result.first_failing is None
    assert [r.verdict for r in result.lengths] == ["pass"] * len(result.lengths)
    assert result.lengths[-1].length == 300_000  # the maximum itself, not a multiple of the granularity
    assert "up to the longest length tried" in result.verdict


def test_fails_at_the_shortest_length_and_every_one_below_it():
    result = find_effective_length(ScriptedCurve(lambda _: 0.2), config())
    assert result.effective is None and result.bracket is None
    assert [r.length for r in result.lengths] == [4 * K, 2 * K, K, 512, 256]  # down to the floor
    assert result.first_failing == 256 and all(r.settled and r.verdict == "fail" for r in result.lengths)
    assert (
        result.verdict.startswith(
            "effective: below 256 tokens, the shortest this task can be; fails at the shortest length 4,096"
        )
        and "down to 256" in result.verdict
    )


def test_the_step_down_stops_at_the_tasks_shortest_prompt() -> None:
    result = find_effective_length(ScriptedCurve(lambda _: 0.2), config(floor=700))
    assert [r.length for r in result.lengths] == [4 * K, 2 * K, K, 700]  # 512 would be below the floor
    assert result.verdict.startswith("effective: below 700 tokens, the shortest this task can be")


@pytest.mark.parametrize("edge", [300, 1500, 3000])
def test_a_failing_shortest_length_is_searched_below(edge: int) -> None:
    curve = ScriptedCurve(step_at(edge))
    result = find_effective_length(curve, config())
    passing, failing = result.bracket
    assert passing < edge <= failing < 4 * K
    assert failing / passing <= 1.25 or failing - passing == 256  # the ratio, or no multiple of 256 between
    assert result.lengths[0].length == 4 * K and result.lengths[0].verdict == "fail"
    assert "below the shortest length asked, 4,096" in result.verdict
    assert result.requests == sum(n for _, n in curve.calls)


def test_relative_criterion():
    # A weak model: 0.75 at short lengths, never near 0.856, but it keeps 85% of that below 64K.
    curve = lambda length: 0.75 if length < 64 * K else 0.1  # noqa: E731
    absolute = find_effective_length(ScriptedCurve(curve), config(max_samples=100))
    assert absolute.effective is None and absolute.lengths[0].length == 4 * K
    assert absolute.first_failing == 256  # searched below the shortest length, down to the floor
    result = find_effective_length(ScriptedCurve(curve), config(relative=0.85, max_samples=100))
    reference = result.lengths[0]
    assert reference.requests == 100 and reference.verdict == "pass" and result.criterion == "relative"
    assert result.threshold == pytest.approx(0.85 * reference.accuracy)
    passing, failing = result.bracket
    assert passing < 64 * K <= failing and failing / passing <= 1.25
    assert f"drops below {result.threshold:.3g} (85% of {reference.accuracy:.2f} at 4,096)" in result.verdict


def test_relative_criterion_with_nothing_right_at_the_shortest_length():
    result = find_effective_length(ScriptedCurve(lambda _: 0.0), config(relative=0.85))
    assert result.effective is None and result.lengths[0].verdict == "fail" and len(result.lengths) == 1


def test_typical_curve_uses_under_30_percent_of_the_full_grid():
    for seed in range(5):
        result = find_effective_length(ScriptedCurve(logistic(150_000), seed), config())
        passing, failing = result.bracket
        assert failing / passing <= 1.25
        assert result.full_grid_lengths == 26 and result.full_grid_requests == 26 * 50
        assert result.requests <= 0.30 * result.full_grid_requests, result.requests


def test_full_grid_definition():
    grid = full_grid(config(min_length=4 * K, max_length=32 * K))
    assert grid[0] == 4 * K and grid[-1] == 32 * K
    assert all(b / a <= 1.25 + 256 / a for a, b in itertools.pairwise(grid))
    assert grid == [4096, 5120, 6400, 7936, 9984, 12544, 15616, 19456, 24320, 30464, 32768]


def test_judge_stops_when_interval_clears_threshold():
    curve = ScriptedCurve(lambda _: 1.0)
    r = judge_length(curve, 8 * K, 0.856, config())
    assert r.verdict == "pass" and r.settled and r.n == 30  # 20/20 -> lo 0.839; 30/30 -> lo 0.886
    r = judge_length(ScriptedCurve(lambda _: 0.0), 8 * K, 0.856, config())
    assert r.verdict == "fail" and r.n == 10


def test_undecided_length_is_decided_at_the_cap_and_marked():
    curve = ScriptedCurve(lambda length: 0.86 if length < 20_000 else 0.0, seed=3)
    result = find_effective_length(curve, config(max_samples=40))
    capped = [r for r in result.lengths if not r.settled]
    assert capped and all(r.n == 40 and r.requests == 40 for r in capped)
    assert all(r.verdict == ("pass" if r.accuracy >= 0.856 else "fail") for r in capped)
    assert "40-sample cap" in result.verdict


def test_errored_samples_count_as_requests_not_trials():
    result = judge_length(ScriptedCurve(lambda _: 1.0, scored=0.5), 8 * K, 0.856, config())
    assert result.requests == 2 * result.n and result.verdict == "pass"


class Rejecting(ScriptedCurve):
    """Every sample over `above` tokens errors (no scored sample there)."""

    def __init__(self, curve: Callable[[int], float], above: int, below: int = 0) -> None:
        super().__init__(curve)
        self.above, self.below = above, below

    def __call__(self, length, n_more):
        return (0, 0) if length > self.above or length < self.below else super().__call__(length, n_more)


def test_a_length_with_no_scored_sample_bounds_nothing_on_the_climb():
    result = find_effective_length(Rejecting(lambda _: 1.0, above=50_000), config())
    rejected = [r for r in result.lengths if r.verdict == "no_data"]
    assert [r.length for r in rejected] == [64 * K] and rejected[0].requests == 10  # one batch, then it stops
    assert result.effective == 32 * K and result.bracket is None and result.first_failing is None
    assert "drops" not in result.verdict and result.verdict.endswith("no scored samples at 65,536")


def test_a_length_with_no_scored_sample_bounds_nothing_in_the_bisection():
    class Window(ScriptedCurve):  # samples between 80,000 and 120,000 tokens all error
        def __call__(self, length, n_more):
            return (0, 0) if 80_000 < length < 120_000 else super().__call__(length, n_more)

    curve = Window(step_at(100_000))  # the bisection's first midpoint, 92,672, scores nothing
    result = find_effective_length(curve, config())
    assert [r.length for r in result.lengths if r.verdict == "no_data"] == [92_672]
    assert result.bracket == (64 * K, 128 * K)  # the bracket the scored lengths give, no narrower
    assert "between 65,536 and 131,072" in result.verdict


def test_a_shortest_length_with_no_scored_sample_is_not_a_failure():
    result = find_effective_length(Rejecting(lambda _: 1.0, above=10**9, below=10**9), config())
    assert result.effective is None and result.first_failing is None and len(result.lengths) == 1
    assert result.verdict == "not measured; no scored samples at 4,096"


def test_bad_measure_and_config():
    with pytest.raises(ValueError):
        judge_length(lambda length, n: (n + 1, n), 4096, 0.856, config())
    with pytest.raises(ValidationError):
        LimitConfig(min_length=8192, max_length=4096)


def test_the_answer_room_must_leave_the_shortest_probe_prompt() -> None:
    """1k of prompt, or --min-length where the search starts below it (a 1,024-token server at --min-length
    512 takes an answer room of 64); more is refused by name, with what would fit."""
    from ctxprobe.evals.limit.api import room_for_prompt
    from ctxprobe.tasks.errors import UserError

    room_for_prompt(64, 1024, "the served context", 512)
    room_for_prompt(512, 1024, "the served context", 512)
    with pytest.raises(UserError, match=r"--answer-room 513 leaves no room .* give at most 512"):
        room_for_prompt(513, 1024, "the served context", 512)
    with pytest.raises(UserError, match="give at most 7,168"):
        room_for_prompt(7169, 8192, "--max-length 8k", 4096)
