"""Shared test setup. Tests import the installed package (`pip install -e ".[test]"` or `pip install ".[test]"`):
`ctxprobe.tasks`, `ctxprobe.runners`, `ctxprobe.evals`.

The test tiers. Plain `pytest -q` runs the fast tier: every test that carries none of the opt-in markers
below. Those run only when asked for, because they take minutes or need more than the repository (a real
engine, a vLLM build, a router in front of engines, the package registry):

    pytest -q --tiers engine          # the fast tier plus the engine tier
    pytest -q -m engine               # the engine tier alone (a tier named in -m is opted in)
    pytest -q --tiers all             # everything

A tier is opted in when `--tiers` names it (or says `all`) or when the `-m` expression names its marker, so
`-m "engine or slow"` runs both and `-m "not slow"` still leaves the other tiers out. Tests left out are
reported as deselected in pytest's closing line, never as skipped. `.ci/run` runs each tier explicitly."""

from __future__ import annotations

import re

import pytest

TIERS = ("engine", "vllm", "router", "floors", "slow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tiers",
        default="",
        metavar="TIER,...",
        help=f"opt-in test tiers to run besides the fast tier: {', '.join(TIERS)}, or all "
        "(a tier named in -m is opted in too)",
    )


def asked_tiers(config: pytest.Config) -> set[str]:
    """The names `--tiers` gives; a name that is no tier is a usage error, before anything is collected."""
    asked = {name.strip() for name in config.getoption("--tiers").split(",") if name.strip()}
    unknown = asked - {*TIERS, "all"}
    if unknown:
        raise pytest.UsageError(f"--tiers: unknown tier {', '.join(sorted(unknown))} (known: {', '.join(TIERS)}, all)")
    return asked


def pytest_configure(config: pytest.Config) -> None:
    asked_tiers(config)


def opted_in(config: pytest.Config) -> set[str]:
    """The opt-in tiers this run selects: those `--tiers` names, and those the `-m` expression names."""
    asked = asked_tiers(config)
    if "all" in asked:
        return set(TIERS)
    named = set(re.findall(r"[A-Za-z_]\w*", config.getoption("markexpr") or ""))
    return asked | (named & set(TIERS))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    left_out = set(TIERS) - opted_in(config)
    if not left_out:
        return
    kept, deselected = [], []
    for item in items:
        tiers = {mark.name for mark in item.iter_markers()} & left_out
        (deselected if tiers else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries wait 0.01 s instead of the policy's seconds, for tests whose subject is not the backoff's length
    (tests/runners/test_retry.py checks that)."""
    from ctxprobe.runners.retry import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "backoff_s", lambda self, attempts, retry_after_s=None, rng=None: 0.01)
