"""Every built-in suite loads, and each of its tasks builds at its shortest length (`Suite.check`)."""

from __future__ import annotations

import pytest

from ctxprobe.tasks.suite import builtin_suites, load_suite


def test_the_builtin_suites_are_the_documented_ones() -> None:
    assert {"quick", "nightly", "ruler"} <= set(builtin_suites())


@pytest.mark.parametrize("name", builtin_suites())
def test_a_builtin_suite_checks(name: str) -> None:
    suite = load_suite(name)
    assert suite.name == name and suite.tasks
    suite.check()
