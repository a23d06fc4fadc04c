"""The golden runs (`tests/golden/scenarios.py`) against their snapshots in tests/golden/snapshots/: what the
command line prints and writes (records, ids, prompt digests, manifests, compare and paired-gate outputs,
`--help` of every subcommand), normalised. A change of structure must leave them as they are; a change of
behaviour rewrites them on purpose, and its diff is then what changed:

    CTXPROBE_UPDATE_GOLDEN=1 python -m pytest -m slow tests/golden    # rewrite the snapshots
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.golden.scenarios import scenarios

SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.mark.slow
def test_the_golden_runs_are_unchanged(tmp_path: Path) -> None:
    got = scenarios(tmp_path)
    if os.environ.get("CTXPROBE_UPDATE_GOLDEN") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        for old in SNAPSHOTS.glob("*.txt"):
            old.unlink()
        for name, text in got.items():
            (SNAPSHOTS / f"{name}.txt").write_text(text)
    kept = {p.stem: p.read_text() for p in SNAPSHOTS.glob("*.txt")}
    assert sorted(kept) == sorted(got), "scenarios added or gone: rewrite the snapshots (see the module docstring)"
    changed = {
        name: "".join(
            difflib.unified_diff(
                kept[name].splitlines(True), got[name].splitlines(True), f"snapshots/{name}.txt", "now", n=1
            )
        )
        for name in got
        if got[name] != kept[name]
    }
    assert not changed, "\n".join(f"{name}:\n{diff[:3000]}" for name, diff in changed.items())
