"""A suite's `cache_check:` (auto, off or a share, as `--cache-check` takes it): parsed where the suite is read
(YAML's bare `off` is off; anything else is one line and exit 2), honoured by the dry run and by the run (the
checks it sends, the line it ends with, the manifest's record), and overridden by the flag when one is given.
The built-in quick suite states `off`, and a run of it from before it did still gates against one from after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.cache_path import ALPHA, sign_test_p
from ctxprobe.evals.compare.gate import gate_problems
from ctxprobe.evals.records.cache_check import CACHE_CHECKS_FILE, CacheCheck
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.run.cache_check import choose
from ctxprobe.evals.run.estimate import render_estimate
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import load_suite
from tests.runners.fake_prefix_cache import CorruptingPrefixCache

SUITE = """name: small
layout: nested
seed: 0
samples: {samples}
lengths: [1k, 2k]
depths: "0:100:50"
cache_check: {value}
tasks:
  - family: niah
"""


def _suite(tmp_path: Path, value: str, samples: int = 2) -> Path:
    path = tmp_path / f"small-{len(list(tmp_path.glob('small-*')))}.yaml"
    path.write_text(SUITE.format(value=value, samples=samples))
    return path


@pytest.mark.parametrize(
    ("value", "read"), [("off", "off"), ("no", "off"), ("auto", "auto"), ("0.25", "0.25"), ("1", "1"), ("'OFF'", "off")]
)
def test_a_suite_states_the_control_as_the_flag_takes_it(tmp_path: Path, value: str, read: str) -> None:
    assert load_suite(str(_suite(tmp_path, value))).cache_check == read


def test_a_suite_that_states_nothing_leaves_it_to_the_layout() -> None:
    assert load_suite("quick-independent").cache_check is None


@pytest.mark.parametrize("bad", ["2", "0", "-0.5", "true", "often", "[0.5]", ".nan"])
def test_a_bad_value_in_a_suite_is_one_line_and_exit_2(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, bad)
    with pytest.raises(UserError, match=r"^malformed suite .*: cache_check: .* is not auto, off or a share"):
        load_suite(str(path))
    code = main(
        ["run", "--suite", str(path), "--dry-run", "--prefill-rate", "100", "--results-dir", str(tmp_path / "runs")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cache_check" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "runs").exists()


def _estimate(path: Path, **flag: str) -> ctxprobe.Estimate:
    return ctxprobe.estimate(suite=str(path), prefill_rate=1000.0, token_counter="estimate:4", **flag)


def test_the_dry_run_costs_what_the_suite_states_and_the_flag_overrides_it(tmp_path: Path) -> None:
    share, off, auto = _suite(tmp_path, "0.5"), _suite(tmp_path, "off"), _suite(tmp_path, "auto")
    recipes = load_suite(str(share)).recipes(lambda mode: "estimate:4")
    halved = choose(recipes, "0.5", seed=0, computed_prefill=0)
    est = _estimate(share)
    assert est.cache_check == "0.5" and est.cache_check_requests == len(halved) == 5  # 1K: 4 servable, 2K: 6
    assert est.cache_check_tokens == sum(r.context_tokens for r in halved)
    assert f"cache-path control (cache_check: 0.5 in suite small): {len(halved)} cold re-sends" in render_estimate(est)
    stated_off = _estimate(off)
    assert stated_off.cache_check == "off" and stated_off.cache_check_requests == stated_off.cache_check_tokens == 0
    assert "cache-path control: off (cache_check: off in suite small): no cold re-sends" in render_estimate(stated_off)
    overridden = _estimate(share, cache_check="off")  # the flag wins over the suite, either way
    assert overridden.cache_check_requests == 0 and "(--cache-check off)" in render_estimate(overridden)
    assert _estimate(off, cache_check="1").cache_check_requests == 10
    assert _estimate(off, cache_check="auto").cache_check_requests == _estimate(auto).cache_check_requests >= 2


def _run(url: str, suite: Path, results: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--endpoint",
            url,
            "--suite",
            str(suite),
            "--quiet",
            "--no-report",
            "--results-dir",
            str(results),
            *extra,
        ]
    )


def _manifest(results: Path) -> dict:
    return json.loads((next(results.iterdir()) / "manifest.json").read_text())


def test_a_run_honours_the_suites_off_and_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with CorruptingPrefixCache() as fake:
        code = _run(fake.url, _suite(tmp_path, "off", samples=1), tmp_path / "runs")
    assert code == 0 and fake.cold_requests == 0
    control = _manifest(tmp_path / "runs")["cache_check"]
    assert control["verdict"] == "off" and control["stated"] == "cache_check: off in suite small"
    assert not (next((tmp_path / "runs").iterdir()) / CACHE_CHECKS_FILE).exists()
    lines = [x for x in capsys.readouterr().err.splitlines() if "cache path" in x]
    assert lines == [
        "ctxprobe: cache path: not checked (cache_check: off in suite small; --cache-check auto checks it)"
    ]


def test_a_run_honours_the_suites_share_and_the_flag_overrides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    every = _suite(tmp_path, "1", samples=1)
    with CorruptingPrefixCache() as fake:
        code = _run(fake.url, every, tmp_path / "share")
    control = _manifest(tmp_path / "share")["cache_check"]
    assert fake.cold_requests == control["checked"] == 5 and control["asked"] == "1"  # every servable request
    assert control["verdict"] == "fault" and code == 7
    capsys.readouterr()
    with CorruptingPrefixCache() as fake:
        code = _run(fake.url, every, tmp_path / "flag", "--cache-check", "off")
    assert code == 0 and fake.cold_requests == 0
    assert _manifest(tmp_path / "flag")["cache_check"]["stated"] == "--cache-check off"
    assert "ctxprobe: cache path: not checked (--cache-check off)" in capsys.readouterr().err.splitlines()


def test_an_old_record_reads_as_before() -> None:
    old = CacheCheck.model_validate({"verdict": "off", "asked": "off"})
    assert old.stated == "" and old.line() == "cache path: not checked (--cache-check off)"


def test_a_run_from_before_the_suite_stated_the_control_gates_against_one_from_after(tmp_path: Path) -> None:
    with CorruptingPrefixCache(corrupt=False) as fake:
        assert _run(fake.url, _suite(tmp_path, "off", samples=1), tmp_path / "after") == 0
        assert _run(fake.url, _suite(tmp_path, "1", samples=1), tmp_path / "other") == 0
    after = next((tmp_path / "after").iterdir())
    before = tmp_path / "before"
    before.mkdir()
    for item in after.iterdir():
        (before / item.name).write_bytes(item.read_bytes())
    manifest = json.loads((before / "manifest.json").read_text())
    del manifest["suite"]["cache_check"]  # as a run of the suite wrote it before the suite could state one
    (before / "manifest.json").write_text(json.dumps(manifest))
    old, new, other = load_run(before), load_run(after), load_run(next((tmp_path / "other").iterdir()))
    assert old.manifest.suite.cache_check is None and new.manifest.suite.cache_check == "off"
    assert gate_problems(old, [new, other], ["baseline", "after", "other"]) == []


def test_quick_states_off_because_its_checks_could_never_decide() -> None:
    """quick.yaml's comment names the fewest one-sided checks the sign test decides on, and auto's floor on quick
    stays below it (were quick to grow past it, the reason for `off` would be gone)."""
    quick = load_suite("quick")
    assert quick.cache_check == "off" and quick.layout == "nested"
    need = next(n for n in range(1, 64) if sign_test_p(n, 0) < ALPHA)
    text = (Path(ctxprobe.__file__).parent / "tasks" / "suites" / "quick.yaml").read_text()
    assert f"at least {need}\n# checks right on one side alone" in text and "nightly" in text
    floor = ctxprobe.estimate(suite="quick", cache_check="auto", prefill_rate=1000.0, token_counter="estimate:4")
    assert 0 < floor.cache_check_requests < need
