"""The top-k KL estimator against computations written here: the exact KL by hand with the full
vocabulary, the coarse-grained KL by hand where the candidate lists every token the baseline does, a
brute-force minimum over a grid where it does not, and the lower-bound property on random distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ctxprobe.evals.compare.paired.topk_kl import PROB_FLOOR, Side, topk_kl


def side(dist: dict[int, float], k: int | None = None) -> Side:
    """The top-k of a distribution (all of it by default) as an engine lists it."""
    top = sorted(dist.items(), key=lambda kv: -kv[1])[: k or len(dist)]
    return Side(known=dict(top), kth=top[-1][1])


def test_full_vocabulary_is_the_exact_kl_by_hand():
    p = {0: 0.5, 1: 0.3, 2: 0.2}
    q = {0: 0.4, 1: 0.4, 2: 0.2}
    # 0.5 ln(0.5/0.4) + 0.3 ln(0.3/0.4) + 0.2 ln 1 = 0.111572 - 0.086305 = 0.025267
    assert topk_kl(side(p), side(q)) == pytest.approx(0.5 * math.log(1.25) + 0.3 * math.log(0.75), abs=1e-12)
    assert topk_kl(side(p), side(q)) == pytest.approx(0.025267, abs=1e-6)
    assert topk_kl(side(p), side(p)) == pytest.approx(0.0, abs=1e-15)


def test_random_full_vocabularies_give_the_exact_kl():
    rng = np.random.default_rng(3)
    for _ in range(200):
        p, q = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
        exact = float(np.sum(p * np.log(p / q)))
        got = topk_kl(side(dict(enumerate(p))), side(dict(enumerate(q))))
        assert got == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_candidate_listing_the_baselines_tokens_gives_the_coarse_kl_by_hand():
    p = {0: 0.5, 1: 0.3, 2: 0.15, 3: 0.05}
    q = {0: 0.6, 1: 0.2, 2: 0.1, 3: 0.1}
    # baseline lists {0, 1} (rest 0.2); the candidate lists {0, 1, 2} (so both probabilities of 0 and 1 are known)
    by_hand = 0.5 * math.log(0.5 / 0.6) + 0.3 * math.log(0.3 / 0.2) + 0.2 * math.log(0.2 / 0.2)
    assert topk_kl(side(p, 2), side(q, 3)) == pytest.approx(by_hand, abs=1e-12)
    exact = sum(p[t] * math.log(p[t] / q[t]) for t in p)
    assert by_hand < exact  # the rest bucket hides the divergence among tokens 2 and 3


def _coarse(p_listed: np.ndarray, base_rest: float, q_listed: np.ndarray) -> np.ndarray:
    """The coarse KL on the baseline's listed tokens plus one rest bucket; q_listed may be a grid (last axis:
    the tokens)."""
    q_rest = 1.0 - q_listed.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (p_listed * np.log(p_listed / q_listed)).sum(axis=-1) + base_rest * np.log(base_rest / q_rest)
    return np.where(q_rest > 0, terms, np.inf)


@pytest.mark.parametrize(
    ("p", "q"),
    [
        # the least-KL fill is capped by the bound u (the candidate's 2nd probability, 0.2, its rest 0.3)
        ({0: 0.45, 1: 0.25, 2: 0.15, 3: 0.1, 4: 0.05}, {0: 0.5, 3: 0.2, 4: 0.15, 1: 0.1, 2: 0.05}),
        # ... and lies inside it (1.5 * 0.15 = 0.225 < u = 0.25)
        ({0: 0.6, 1: 0.15, 2: 0.12, 3: 0.08, 4: 0.05}, {0: 0.4, 3: 0.35, 1: 0.1, 4: 0.1, 2: 0.05}),
    ],
)
def test_a_token_the_candidate_does_not_list_takes_the_grid_minimum(p, q):
    base, cand = side(p, 2), side(q, 2)  # baseline lists {0, 1}; the candidate {0, 3}: 1 is unlisted
    listed = sorted(q.values(), reverse=True)[:2]
    u = min(listed[1], 1.0 - sum(listed))
    x = np.linspace(1e-9, u, 400001)
    grid = _coarse(np.array([p[0], p[1]]), 1.0 - p[0] - p[1], np.stack([np.full_like(x, q[0]), x], axis=-1))
    assert topk_kl(base, cand) == pytest.approx(float(grid.min()), abs=1e-9)
    assert topk_kl(base, cand) <= sum(p[t] * math.log(p[t] / q[t]) for t in p)


def test_two_unlisted_tokens_and_the_candidates_rest_bound_take_the_grid_minimum():
    p = {0: 0.3, 1: 0.3, 2: 0.3, 3: 0.1}  # the baseline lists its whole vocabulary: no rest
    q = {0: 0.7, 3: 0.25, 1: 0.03, 2: 0.02}  # the candidate lists {0, 3}: rest 0.05 for tokens 1 and 2
    base, cand = side(p), side(q, 2)
    x = np.linspace(0.0, 0.05, 2001)
    x1, x2 = np.meshgrid(x, x, indexing="ij")
    feasible = x1 + x2 <= 0.05 + 1e-15
    with np.errstate(divide="ignore"):
        kl = 0.3 * np.log(0.3 / 0.7) + 0.1 * np.log(0.1 / 0.25) + 0.3 * np.log(0.3 / x1) + 0.3 * np.log(0.3 / x2)
    best = float(np.where(feasible, kl, np.inf).min())  # at x1 = x2 = 0.025: the rest split evenly
    assert topk_kl(base, cand) == pytest.approx(best, abs=1e-6)
    assert topk_kl(base, cand) == pytest.approx(
        0.3 * math.log(0.3 / 0.7) + 0.1 * math.log(0.4) + 0.6 * math.log(0.3 / 0.025), abs=1e-9
    )


def test_random_top_k_is_a_lower_bound_of_the_exact_kl_at_every_k():
    rng = np.random.default_rng(11)
    vocab = 6
    for trial in range(600):
        p = rng.dirichlet(np.full(vocab, 0.7))
        q = rng.dirichlet(np.full(vocab, 0.7))
        if trial % 2:
            q = 0.7 * p + 0.3 * q  # a near build
        exact = float(np.sum(p * np.log(p / q)))
        for k in range(1, vocab + 1):
            got = topk_kl(side(dict(enumerate(p)), k), side(dict(enumerate(q)), k))
            assert -1e-12 <= got <= exact * (1 + 1e-6) + 1e-9, (trial, k, got, exact)
            if k == vocab:
                assert got == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_lists_that_disagree_show_a_divergence_the_rest_cannot_explain():
    # the baseline is sure of token 0, the candidate of token 1 and lists nothing else: its unlisted token 0
    # holds at most its rest, 0.05, so the least KL puts 0.05 there and 0.95 in the baseline's rest bucket
    base = Side(known={0: 0.9}, kth=0.9)
    cand = Side(known={1: 0.95}, kth=0.95)
    assert topk_kl(base, cand) == pytest.approx(0.9 * math.log(0.9 / 0.05) + 0.1 * math.log(0.1 / 0.95), abs=1e-9)
    assert topk_kl(base, cand) > 2.3  # nats: a different answer, whatever the unlisted tokens hold


def test_a_candidate_that_leaves_no_mass_for_a_listed_token_is_floored_not_infinite():
    base = Side(known={0: 0.6, 1: 0.4}, kth=0.4)
    cand = Side(known={1: 0.7, 2: 0.3}, kth=0.3)  # sums to 1: token 0 has no room on the candidate's side
    got = topk_kl(base, cand)
    assert math.isfinite(got)
    assert got == pytest.approx(0.6 * math.log(0.6 / PROB_FLOOR) + 0.4 * math.log(0.4 / 0.7), rel=1e-9)


def test_lists_summing_past_one_by_rounding_are_scaled_not_negative():
    base = Side(known={0: 0.7000004, 1: 0.3000004}, kth=0.3000004)
    assert topk_kl(base, base) == pytest.approx(0.0, abs=1e-12)
